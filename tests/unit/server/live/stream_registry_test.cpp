#include "server/live/stream_registry.hpp"

#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "server/live/worker_mesh.hpp"

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

TEST_CASE("with several workers max_streams counts a name once, whichever workers hold it") {
  WorkerMesh mesh(2);
  StreamRegistry r0, r1;
  r0.attach_mesh(&mesh, 0);
  r1.attach_mesh(&mesh, 1);
  r0.set_max_streams(2);
  r1.set_max_streams(2);
  media::StreamHub::Options o;
  // Players of the same two names on both loops: two streams, not four.
  for (StreamRegistry* r : {&r0, &r1}) {
    REQUIRE(r->get_or_create("live/a", o) != nullptr);
    REQUIRE(r->get_or_create("live/b", o) != nullptr);
  }
  CHECK(r1.get_or_create("live/c", o) == nullptr);
  CHECK(r0.get_or_create("live/c", o) == nullptr);
  // A name counts until the last worker lets it go.
  r0.remove_if_unused("live/a");
  CHECK(r0.get_or_create("live/c", o) == nullptr);
  r1.remove_if_unused("live/a");
  CHECK(r0.get_or_create("live/c", o) != nullptr);
  CHECK(r1.get_or_create("live/c", o) != nullptr);
  CHECK(r1.get_or_create("live/d", o) == nullptr);
}

TEST_CASE("a held hub outlives its publisher while a player holds it unsubscribed (a paused live player)") {
  StreamRegistry r;
  media::StreamHub::Options o;
  int publisher = 0;
  auto* pub = reinterpret_cast<const SessionPeer*>(&publisher);
  REQUIRE(r.claim_publisher("live/p", pub, o) == StreamRegistry::Claim::Claimed);
  media::StreamHub* hub = r.find("live/p");
  r.hold("live/p");  // the player, not subscribed (paused)
  r.release_publisher("live/p", pub);
  CHECK(r.find("live/p") == hub);  // still there for the player
  r.release("live/p");
  CHECK(r.find("live/p") == nullptr);  // the last one out removed it
}

namespace {
// A publication the registry can ask to give its name up: it releases the name as a connection does.
struct FakeSeat final : PublisherSeat {
  StreamRegistry& registry;
  std::string key;
  const SessionPeer* publisher;
  uint64_t quiet = 0;
  std::optional<uint32_t> latest;  // what give_up answers
  std::string gave_up_why;
  const SessionPeer* taker = nullptr;
  FakeSeat(StreamRegistry& r, std::string k, const SessionPeer* p) : registry(r), key(std::move(k)), publisher(p) {}
  int keyframes_asked = 0;
  uint64_t quiet_ms() const override { return quiet; }
  void request_keyframe() override { ++keyframes_asked; }
  std::optional<uint32_t> give_up(const std::string& why, const SessionPeer* t) override {
    gave_up_why = why;
    taker = t;
    registry.release_publisher(key, publisher);
    return latest;
  }
};
const SessionPeer* fake_socket(int& storage) { return reinterpret_cast<const SessionPeer*>(&storage); }

// Two workers' registries on one mesh, and a publisher of `key` on worker 0 with its seat.
struct TwoWorkers {
  WorkerMesh mesh{2};
  StreamRegistry w0, w1;
  media::StreamHub::Options o;
  std::string key;
  int a = 0;
  std::optional<FakeSeat> seat;
  explicit TwoWorkers(std::string k) : key(std::move(k)) {
    w0.attach_mesh(&mesh, 0);
    w1.attach_mesh(&mesh, 1);
    REQUIRE(w0.claim_publisher(key, fake_socket(a), o) == StreamRegistry::Claim::Claimed);
    seat.emplace(w0, key, fake_socket(a));
    w0.set_seat(key, fake_socket(a), &*seat);
  }
  // Every event posted to `worker` so far, handled there.
  void pump(uint32_t worker) {
    StreamRegistry& r = worker == 0 ? w0 : w1;
    while (auto e = mesh.next_event(worker)) r.on_mesh_event(*e);
  }
};
}  // namespace

TEST_CASE("a takeover: the publisher gives the name up at once, and the stream counts it") {
  StreamRegistry r;
  media::StreamHub::Options o;
  int a = 0, b = 0;
  REQUIRE(r.claim_publisher("live/t", fake_socket(a), o) == StreamRegistry::Claim::Claimed);
  Handover handover;
  // Before the publication began there is nothing to ask: the publisher stays.
  CHECK(r.evict("live/t", 0, "replaced", fake_socket(b), handover) == StreamRegistry::Eviction::Kept);
  FakeSeat seat(r, "live/t", fake_socket(a));
  seat.latest = 41'000;
  r.set_seat("live/t", fake_socket(a), &seat);
  CHECK(r.entries().at("live/t").published_since_ms > 0);
  REQUIRE(r.claim_publisher("live/t", fake_socket(b), o) == StreamRegistry::Claim::Taken);
  CHECK(r.evict("live/t", 0, "replaced by a new publisher", fake_socket(b), handover) ==
        StreamRegistry::Eviction::Freed);
  CHECK(seat.gave_up_why == "replaced by a new publisher");
  CHECK(seat.taker == fake_socket(b));
  CHECK(handover.takeovers == 1);
  CHECK(handover.continue_after == std::optional<uint32_t>(41'000));
  REQUIRE(r.claim_publisher("live/t", fake_socket(b), o) == StreamRegistry::Claim::Claimed);
  r.set_takeovers("live/t", handover.takeovers);
  CHECK(r.entries().at("live/t").takeovers == 1);
  Handover none;
  CHECK(r.evict("live/none", 0, "x", fake_socket(b), none) == StreamRegistry::Eviction::Freed);  // nobody
  CHECK(none.takeovers == 0);
  r.release_publisher("live/t", fake_socket(b));
}

TEST_CASE("reject with a stale rule: a publisher that sent a frame within stale_ms stays, a quieter one goes") {
  StreamRegistry r;
  media::StreamHub::Options o;
  int a = 0, b = 0;
  REQUIRE(r.claim_publisher("live/s", fake_socket(a), o) == StreamRegistry::Claim::Claimed);
  FakeSeat seat(r, "live/s", fake_socket(a));
  r.set_seat("live/s", fake_socket(a), &seat);
  Handover handover;
  seat.quiet = 2999;
  CHECK(r.evict("live/s", 3000, "stale", fake_socket(b), handover) == StreamRegistry::Eviction::Kept);
  CHECK(seat.gave_up_why.empty());
  seat.quiet = 3000;
  CHECK(r.evict("live/s", 3000, "stale", fake_socket(b), handover) == StreamRegistry::Eviction::Freed);
  CHECK(seat.gave_up_why == "stale");
}

TEST_CASE("a takeover across workers: the owner's publisher gives up there, and the asking worker hears back") {
  TwoWorkers t("live/x");
  StreamRegistry& w1 = t.w1;
  FakeSeat& seat = *t.seat;
  const media::StreamHub::Options& o = t.o;
  int b = 0;
  seat.latest = 77'000;
  REQUIRE(w1.claim_publisher("live/x", fake_socket(b), o) == StreamRegistry::Claim::Taken);
  Handover handover;
  CHECK(w1.evict("live/x", 0, "replaced", fake_socket(b), handover) == StreamRegistry::Eviction::Elsewhere);
  std::vector<std::pair<bool, Handover>> answers;
  w1.evict_elsewhere("live/x", 0, [&](bool freed, const Handover& h) { answers.emplace_back(freed, h); });
  w1.evict_elsewhere("live/x", 0, [&](bool freed, const Handover& h) { answers.emplace_back(freed, h); });
  t.pump(0);  // one Evict (the second caller waits for the same answer)
  CHECK(seat.gave_up_why == "replaced by a new publisher (on another loop)");
  CHECK(seat.taker == nullptr);
  CHECK(answers.empty());
  t.pump(1);
  REQUIRE(answers.size() == 2);
  for (const auto& answer : answers) {
    CHECK(answer.first);
    CHECK(answer.second.takeovers == 1);
    CHECK(answer.second.continue_after == std::optional<uint32_t>(77'000));
  }
  CHECK(w1.claim_publisher("live/x", fake_socket(b), o) == StreamRegistry::Claim::Claimed);
  w1.release_publisher("live/x", fake_socket(b));
}

TEST_CASE("across workers with reject: a publisher that is not stale stays, and the answer says so") {
  TwoWorkers t("live/y");
  StreamRegistry &w0 = t.w0, &w1 = t.w1;
  FakeSeat& seat = *t.seat;
  seat.quiet = 100;
  std::vector<bool> answers;
  w1.evict_elsewhere("live/y", 3000, [&](bool freed, const Handover&) { answers.push_back(freed); });
  t.pump(0);
  t.pump(1);
  REQUIRE(answers.size() == 1);
  CHECK_FALSE(answers[0]);
  CHECK(seat.gave_up_why.empty());
  w0.release_publisher("live/y", fake_socket(t.a));
}

// A WHEP player's PLI reaches the publisher's seat: on its own loop at once, from another loop
// through the owner (the player's loop holds only a mirror of the stream).
TEST_CASE("a player's keyframe request reaches the publisher's seat, on its loop or through the owner") {
  TwoWorkers t("live/k");
  StreamRegistry &w0 = t.w0, &w1 = t.w1;
  FakeSeat& seat = *t.seat;
  const media::StreamHub::Options& o = t.o;
  w0.request_keyframe("live/k");
  CHECK(seat.keyframes_asked == 1);
  REQUIRE(w1.get_or_create("live/k", o) != nullptr);  // a player of it on worker 1
  w1.request_keyframe("live/k");
  CHECK(seat.keyframes_asked == 1);  // not yet: the request is on its way
  t.pump(0);
  CHECK(seat.keyframes_asked == 2);
  CHECK(w0.keyframe_requests() == 1);
  CHECK(w1.keyframe_requests() == 1);
  w1.request_keyframe("live/unknown");  // no such stream here: nothing, not counted
  CHECK(w1.keyframe_requests() == 1);
  w0.release_publisher("live/k", fake_socket(t.a));
}
