// media/rtp/reorder_buffer: packets leave in order, a gap is waited for until its deadline or
// until the buffer is full, duplicates and late ones are dropped, the wrap and a restart.
#include <doctest/doctest.h>

#include <vector>

#include "media/rtp/reorder_buffer.hpp"

using namespace sluice;
using namespace sluice::media::rtp;

namespace {

std::vector<uint16_t> numbers(const std::vector<ReorderBuffer::Packet>& out) {
  std::vector<uint16_t> n;
  for (const auto& p : out) n.push_back(p.sequence);
  return n;
}

Slice packet(uint16_t seq) { return Slice::copy_of(std::vector<uint8_t>{uint8_t(seq >> 8), uint8_t(seq)}); }

}  // namespace

TEST_CASE("reordered packets leave in order across the wrap") {
  ReorderBuffer b;
  std::vector<ReorderBuffer::Packet> out;
  for (uint16_t s : {65534, 0, 65535, 2, 1}) b.push(s, packet(s), 0, out);
  CHECK(numbers(out) == std::vector<uint16_t>{65534, 65535, 0, 1, 2});
  CHECK(out[2].bytes.span()[1] == 0);
  CHECK(b.held() == 0);
  CHECK_FALSE(b.deadline().has_value());
}

TEST_CASE("a gap is waited for until the deadline, then given up") {
  ReorderBuffer b(ReorderBuffer::Limits{64, 50});
  std::vector<ReorderBuffer::Packet> out;
  b.push(10, packet(10), 0, out);
  b.push(12, packet(12), 5, out);
  b.push(13, packet(13), 8, out);
  CHECK(numbers(out) == std::vector<uint16_t>{10});
  REQUIRE(b.deadline().has_value());
  CHECK(*b.deadline() == 55);
  b.poll(54, out);
  CHECK(out.size() == 1);
  b.poll(55, out);
  CHECK(numbers(out) == std::vector<uint16_t>{10, 12, 13});
  CHECK(b.stats().given_up == 1);
  // 11 comes at last: too late.
  b.push(11, packet(11), 60, out);
  CHECK(b.stats().late == 1);
  b.push(13, packet(13), 60, out);
  CHECK(b.stats().late == 2);
  b.push(15, packet(15), 60, out);
  b.push(15, packet(15), 61, out);
  CHECK(b.stats().duplicates == 1);
  b.push(14, packet(14), 62, out);
  CHECK(numbers(out) == std::vector<uint16_t>{10, 12, 13, 14, 15});
}

TEST_CASE("a packet too far ahead pushes out what is in the way; a big jump is a restart") {
  ReorderBuffer b(ReorderBuffer::Limits{8, 1000});
  std::vector<ReorderBuffer::Packet> out;
  b.push(1, packet(1), 0, out);
  b.push(3, packet(3), 0, out);
  b.push(5, packet(5), 0, out);
  b.push(11, packet(11), 0, out);  // 11 - 2 >= 8: 2 given up, 3 leaves, 4 given up
  CHECK(numbers(out) == std::vector<uint16_t>{1, 3});
  CHECK(b.held() == 2);
  b.push(40000, packet(40000), 0, out);
  CHECK(b.stats().restarts == 1);
  CHECK(numbers(out) == std::vector<uint16_t>{1, 3, 5, 11, 40000});
  b.push(40002, packet(40002), 0, out);
  b.flush(out);
  CHECK(numbers(out) == std::vector<uint16_t>{1, 3, 5, 11, 40000, 40002});
  CHECK(b.held() == 0);
}
