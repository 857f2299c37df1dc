#include "server/live/stream_registry.hpp"

#include <doctest/doctest.h>

using namespace sluice;
using namespace sluice::server;

TEST_CASE("stream names: what encoders send is valid, what could become a path or a log line is not") {
  for (const char* ok : {"cam", "live_123456789_abcDEF", "room/cam-1", "a.b~c=d+e@f:g,h!", "0"}) {
    CHECK_MESSAGE(valid_stream_name(ok), ok);
  }
  for (const char* bad : {"", "..", ".", "a/../b", "../x", "a/./b", "/abs", "trail/", "a//b", "sp ace", "tab\tx",
                          "q\"uote", "back\\slash", "nul\x01", "pct%2e", "star*", "\xc3\xa9t\xc3\xa9"}) {
    CHECK_MESSAGE(!valid_stream_name(bad), bad);
    CHECK_FALSE(stream_name_problem(bad).empty());
  }
  CHECK(valid_stream_name(std::string(200, 'a')));
  CHECK_FALSE(valid_stream_name(std::string(201, 'a')));
}

TEST_CASE("the registry refuses a new stream past max_streams and counts removals back") {
  const uint32_t base = StreamRegistry::total_streams();
  StreamRegistry r;
  r.set_max_streams(base + 2);
  media::StreamHub::Options o;
  REQUIRE(r.get_or_create("live/a", o) != nullptr);
  REQUIRE(r.get_or_create("live/b", o) != nullptr);
  CHECK(r.get_or_create("live/a", o) != nullptr);  // existing streams are always found
  CHECK(r.get_or_create("live/c", o) == nullptr);
  CHECK(r.claim_publisher("live/c", nullptr, o) == StreamRegistry::Claim::Full);
  CHECK(StreamRegistry::total_streams() == base + 2);
  r.remove_if_unused("live/a");
  CHECK(StreamRegistry::total_streams() == base + 1);
  CHECK(r.get_or_create("live/c", o) != nullptr);
}

TEST_CASE("a held hub outlives its publisher while a player holds it unsubscribed (a paused live player)") {
  StreamRegistry r;
  media::StreamHub::Options o;
  int publisher = 0;
  auto* pub = reinterpret_cast<const StreamSocket*>(&publisher);
  REQUIRE(r.claim_publisher("live/p", pub, o) == StreamRegistry::Claim::Claimed);
  media::StreamHub* hub = r.find("live/p");
  r.hold("live/p");  // the player, not subscribed (paused)
  r.release_publisher("live/p", pub);
  CHECK(r.find("live/p") == hub);  // still there for the player
  r.release("live/p");
  CHECK(r.find("live/p") == nullptr);  // the last one out removed it
}
