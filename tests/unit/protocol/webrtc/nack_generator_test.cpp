// protocol/webrtc/nack_generator: missing numbers asked for after the reorder delay, again each
// retry interval, given up after the tries; recovered ones, the wrap, the bound and a restart.
#include <doctest/doctest.h>

#include <vector>

#include "protocol/webrtc/nack_generator.hpp"

using namespace sluice::protocol::webrtc;

namespace {

std::vector<uint16_t> poll(NackGenerator& g, int64_t now) {
  std::vector<uint16_t> out;
  g.poll(now, out);
  return out;
}

}  // namespace

TEST_CASE("a gap is asked for after the reorder delay, then each retry interval, then given up") {
  NackGenerator g(NackGenerator::Limits{100, 3, 5, 40});
  g.on_packet(65533, 0);
  g.on_packet(1, 10);  // 65534, 65535 and 0 are missing
  CHECK(g.missing_now() == 3);
  CHECK(g.deadline() == 15);
  CHECK(poll(g, 14).empty());
  CHECK(poll(g, 15) == std::vector<uint16_t>{65534, 65535, 0});
  g.on_packet(65535, 20);  // a retransmission
  CHECK(g.stats().recovered == 1);
  CHECK(poll(g, 54).empty());
  g.set_rtt(30);
  CHECK(poll(g, 55) == std::vector<uint16_t>{65534, 0});
  CHECK(g.deadline() == 85);
  CHECK(poll(g, 85) == std::vector<uint16_t>{65534, 0});
  CHECK(poll(g, 200).empty());  // three tries each: given up
  CHECK(g.stats().given_up == 2);
  CHECK(g.missing_now() == 0);
  CHECK(g.stats().requests == 7);
}

TEST_CASE("at most max_missing are tracked; a longer jump is a restart") {
  NackGenerator g(NackGenerator::Limits{10, 3, 0, 40});
  g.on_packet(0, 0);
  g.on_packet(8, 0);   // 1..7
  g.on_packet(13, 0);  // 9..12: 11 missing, the oldest one goes
  CHECK(g.missing_now() == 10);
  CHECK(g.stats().given_up == 1);
  CHECK(poll(g, 0).front() == 2);
  g.on_packet(100, 0);
  CHECK(g.missing_now() == 0);
  CHECK(g.stats().given_up == 11);
  g.on_packet(99, 0);  // late, was never missing
  CHECK(g.stats().recovered == 0);
}
