// server/http/hls_sessions.hpp: one set of HLS viewers for every loop. A viewer admitted on one
// loop is known on all; each loop ends only its own sessions (idle ones at its tick, all at its
// drop); a viewer admitted on two loops at once stays the first loop's.
#include <doctest/doctest.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "server/http/hls_sessions.hpp"

using namespace sluice::server;

namespace {

std::string viewer_of(uint8_t last_octet, const std::string& key) {
  const std::vector<uint8_t> address{127, 0, 0, last_octet};
  return HlsSessions::viewer(address, key, "key=abc");
}

}  // namespace

TEST_CASE("a viewer admitted on one loop is known on every loop and counted once") {
  HlsSessions s;
  const std::string v = viewer_of(1, "live/cam");
  CHECK_FALSE(s.known(v, 1000));
  s.admit(v, AccessTicket(), 1000, 0);
  CHECK(s.known(v, 1100));              // asked from another loop: the same session
  s.admit(v, AccessTicket(), 1200, 1);  // admitted again on loop 1 meanwhile: still one
  CHECK(s.size() == 1);
  CHECK(s.viewers_by_stream() == std::map<std::string, size_t>{{"live/cam", 1}});
}

TEST_CASE("each loop ends only its own idle sessions, and requests from any loop keep one alive") {
  HlsSessions s;
  const std::string a = viewer_of(1, "live/a");
  const std::string b = viewer_of(2, "live/b");
  s.admit(a, AccessTicket(), 0, 0);
  s.admit(b, AccessTicket(), 0, 1);
  const uint64_t later = HlsSessions::kIdleMs + 10;
  s.tick(later, 1);  // loop 1's tick: only b is loop 1's
  CHECK(s.known(a, later));
  CHECK_FALSE(s.known(b, later));
  // a was just asked for (from loop 1): loop 0's tick keeps it.
  s.tick(later + 100, 0);
  CHECK(s.known(a, later + 200));
  s.tick(later + 200 + HlsSessions::kIdleMs, 0);
  CHECK(s.size() == 0);
}

TEST_CASE("a stopping loop drops its sessions, not the others'") {
  HlsSessions s;
  s.admit(viewer_of(1, "live/a"), AccessTicket(), 0, 0);
  s.admit(viewer_of(2, "live/a"), AccessTicket(), 0, 1);
  s.admit(viewer_of(3, "live/b"), AccessTicket(), 0, 1);
  s.drop(1);
  CHECK(s.size() == 1);
  CHECK(s.known(viewer_of(1, "live/a"), 10));
}
