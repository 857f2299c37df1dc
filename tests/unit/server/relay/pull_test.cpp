// Pull's state machine against a real RTMP server side (RtmpPeer, on the same loop): it plays the
// upstream and publishes what comes into the local hub (not the upstream's |RtmpSampleAccess),
// follows the upstream's publisher leaving and coming back, fails over to the next upstream at
// once and waits a backoff after a whole round, ends when idle or when the name is published
// here, and as a cluster pull asks where the stream is before each attempt.
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "media/stream_hub.hpp"
#include "media/subscriber.hpp"
#include "server/relay/pull.hpp"
#include "unit/server/idle_socket.hpp"
#include "unit/server/relay/relay_fixture.hpp"
#include "unit/server/relay/rtmp_peer.hpp"

using namespace sluice;
using server::Pull;
using test::Bytes;
using test::RelayFixture;
using test::RtmpPeer;

namespace {

struct Recorded : media::Subscriber {
  std::vector<media::FramePtr> frames;
  int starts = 0;
  int ends = 0;
  void on_frame(const media::FramePtr& f) override { frames.push_back(f); }
  void on_publish_start() override { ++starts; }
  void on_publish_end() override { ++ends; }
};

bool same(const media::FramePtr& f, uint8_t type, uint32_t ts, const Bytes& payload) {
  auto p = f->payload.span();
  return f->rtmp_type == type && f->timestamp == ts && Bytes(p.begin(), p.end()) == payload;
}

Pull::Settings settings_for(std::vector<const RtmpPeer*> upstreams, bool on_demand = false) {
  Pull::Settings s;
  s.key = "live/cam";
  s.name = "cam";
  for (const RtmpPeer* u : upstreams) s.upstreams.push_back(*server::RelayUrl::parse(u->url("origin")));
  s.on_demand = on_demand;
  return s;
}

std::string state(const Pull& p) { return p.status()["state"].get<std::string>(); }

}  // namespace

TEST_CASE("a pull publishes the upstream's stream here, without the upstream's own |RtmpSampleAccess") {
  RelayFixture fx;
  RtmpPeer upstream(fx.loop->loop(), {});
  media::StreamHub& hub = *fx.registry.get_or_create("live/cam", {});
  Recorded player;
  hub.add_subscriber(&player);

  Pull::Settings s = settings_for({&upstream});
  s.query = "token=abc";
  Pull pull(fx.services, s);
  pull.start();
  REQUIRE(fx.run_until([&] { return state(pull) == "live"; }));
  CHECK(upstream.log() == std::vector<std::string>{"connect origin", "play cam?token=abc"});
  CHECK_FALSE(hub.has_publisher());  // the play answer alone publishes nothing

  upstream.send_media(9, 0, test::video_sequence_header());
  upstream.send_media(9, 0, test::keyframe(1));
  upstream.send_media(8, 10, test::audio_frame(2));
  upstream.send_media(9, 40, test::inter_frame(3));
  REQUIRE(fx.run_until([&] { return player.frames.size() >= 4; }));
  fx.run_for(50);
  REQUIRE(player.frames.size() == 4);
  CHECK(player.starts == 1);
  CHECK(same(player.frames[0], 9, 0, test::video_sequence_header()));
  CHECK(same(player.frames[1], 9, 0, test::keyframe(1)));
  CHECK(same(player.frames[2], 8, 10, test::audio_frame(2)));
  CHECK(same(player.frames[3], 9, 40, test::inter_frame(3)));
  CHECK(hub.has_publisher());
  CHECK(fx.registry.is_live("live/cam"));
  const auto status = pull.status();
  CHECK(status["frames"] == 4);
  CHECK(status["connects"] == 1);
  CHECK(status["bytes_in"].get<uint64_t>() > 0);

  // The upstream's publisher leaves: the local publication ends, the players stay and wait.
  upstream.send_status(protocol::Status::PlayUnpublishNotify);
  REQUIRE(fx.run_until([&] { return player.ends == 1; }));
  CHECK_FALSE(hub.has_publisher());
  CHECK(state(pull) == "live");
  // It comes back: the stream starts again here, on the same connection.
  upstream.send_status(protocol::Status::PlayPublishNotify);
  upstream.send_media(9, 1000, test::keyframe(4));
  REQUIRE(fx.run_until([&] { return player.frames.size() == 5; }));
  CHECK(player.starts == 2);
  CHECK(same(player.frames[4], 9, 1000, test::keyframe(4)));
  CHECK(upstream.accepted() == 1);
  hub.remove_subscriber(&player);
}

TEST_CASE("a refusing upstream: the next one at once; after a whole round of failures, a backoff") {
  RelayFixture fx;
  RtmpPeer a(fx.loop->loop(), {.accept_play = false});
  RtmpPeer b(fx.loop->loop(), {.accept_play = false});
  Pull pull(fx.services, settings_for({&a, &b}));
  pull.start();
  REQUIRE(fx.run_until([&] { return state(pull) == "waiting"; }));
  auto status = pull.status();
  CHECK(status["last_error"].get<std::string>().starts_with("play refused: NetStream.Play.StreamNotFound"));
  CHECK(status["failures"] == 0);  // one upstream of two failed: no backoff yet
  pull.on_tick(fx.loop->now_ms());
  CHECK(state(pull) == "connecting");
  CHECK(pull.status()["upstream"] == b.url("origin"));

  REQUIRE(fx.run_until([&] { return state(pull) == "waiting"; }));
  CHECK(b.saw("play cam"));
  CHECK(pull.status()["failures"] == 1);  // the round is over: now a backoff
  pull.on_tick(fx.loop->now_ms());
  CHECK(state(pull) == "waiting");
  pull.on_tick(fx.loop->now_ms() + 1000);
  CHECK(state(pull) == "connecting");
  CHECK(pull.status()["upstream"] == a.url("origin"));
  CHECK(pull.status()["connects"] == 3);
}

TEST_CASE("an upstream that refuses is passed over for the next, which is played") {
  RelayFixture fx;
  RtmpPeer refusing(fx.loop->loop(), {.accept_play = false});
  RtmpPeer taking(fx.loop->loop(), {});
  Pull pull(fx.services, settings_for({&refusing, &taking}));
  pull.start();
  REQUIRE(fx.run_until([&] { return state(pull) == "waiting"; }));
  pull.on_tick(fx.loop->now_ms());
  REQUIRE(fx.run_until([&] { return state(pull) == "live"; }));
  CHECK(taking.saw("play cam"));
  CHECK(pull.status()["upstream"] == taking.url("origin"));
}

TEST_CASE("an upstream that goes quiet while its stream flowed is left after the idle timeout") {
  RelayFixture fx;
  RtmpPeer upstream(fx.loop->loop(), {});
  Pull pull(fx.services, settings_for({&upstream}));
  pull.start();
  REQUIRE(fx.run_until([&] { return state(pull) == "live"; }));
  upstream.send_media(9, 0, test::keyframe(1));
  REQUIRE(fx.run_until([&] { return fx.registry.is_live("live/cam"); }));
  pull.on_tick(fx.loop->now_ms() + 9000);
  CHECK(state(pull) == "live");
  // A clock this far on is past the backoff too: the pull leaves and connects again in the same tick.
  pull.on_tick(fx.loop->now_ms() + 10'001);
  CHECK(pull.status()["last_error"] == "upstream sent nothing for 10s");
  CHECK_FALSE(fx.registry.is_live("live/cam"));  // the local publication ended with it
  CHECK(state(pull) == "connecting");
  CHECK(pull.status()["connects"] == 2);
  REQUIRE(fx.run_until([&] { return state(pull) == "live" && upstream.accepted() == 2; }));
  CHECK(upstream.open_connections() == 1);
}

TEST_CASE("an on-demand pull ends once nobody has used the stream for idle_ms") {
  RelayFixture fx;
  RtmpPeer upstream(fx.loop->loop(), {});
  fx.registry.get_or_create("live/cam", {});
  fx.registry.hold("live/cam");  // a player waits for it
  Pull::Settings s = settings_for({&upstream}, true);
  s.idle_ms = 3000;
  Pull pull(fx.services, s);
  pull.start();
  REQUIRE(fx.run_until([&] { return state(pull) == "live"; }));
  // The ticks' clock stays inside the 10 s an upstream may be quiet once something came (its
  // |RtmpSampleAccess already did).
  const uint64_t t0 = fx.loop->now_ms();
  pull.on_tick(t0 + 5000);  // in use: however long
  CHECK(state(pull) == "live");

  fx.registry.release("live/cam");
  pull.on_tick(t0 + 5000);  // unused from here
  pull.on_tick(t0 + 7999);
  CHECK_FALSE(pull.ended());
  pull.on_tick(t0 + 8000);
  CHECK(pull.ended());
  CHECK(state(pull) == "ended");
  REQUIRE(fx.run_until([&] { return upstream.open_connections() == 0; }));
}

TEST_CASE("a pull whose name is published here meanwhile ends") {
  RelayFixture fx;
  RtmpPeer upstream(fx.loop->loop(), {});
  server::IdleSocket local_publisher(*fx.loop);
  REQUIRE(fx.registry.claim_publisher("live/cam", &local_publisher, {}) == server::StreamRegistry::Claim::Claimed);
  Pull pull(fx.services, settings_for({&upstream}));
  pull.start();
  REQUIRE(fx.run_until([&] { return pull.ended(); }));
  CHECK(upstream.saw("play cam"));
  REQUIRE(fx.run_until([&] { return upstream.open_connections() == 0; }));
  fx.registry.release_publisher("live/cam", &local_publisher);
}

TEST_CASE("a cluster pull asks where the stream is before each attempt, and waits while nobody owns it") {
  RelayFixture fx;
  RtmpPeer owner(fx.loop->loop(), {});
  std::vector<server::StreamLocation> answers;
  int asked = 0;
  Pull::Settings s;
  s.key = "live/cam";
  s.name = "cam";
  s.on_demand = false;
  s.query = "token=internal";
  s.locate = [&](const std::string& key, std::function<void(server::StreamLocation)> done) {
    CHECK(key == "live/cam");
    ++asked;
    server::StreamLocation where = answers.front();
    answers.erase(answers.begin());
    done(where);  // the registry's answer comes later in the server; at once here
  };
  answers.push_back({server::StreamLocation::Kind::Nobody, "", ""});
  answers.push_back(
      {server::StreamLocation::Kind::Remote, "node-b", "rtmp://127.0.0.1:" + std::to_string(owner.port())});
  Pull pull(fx.services, s);
  pull.start();
  CHECK(asked == 1);
  CHECK(state(pull) == "waiting");
  CHECK(pull.status()["last_error"] == "no node owns the stream");
  pull.on_tick(fx.loop->now_ms() + 1000);  // asked again within a second
  CHECK(asked == 2);
  REQUIRE(fx.run_until([&] { return state(pull) == "live"; }));
  CHECK(owner.log() == std::vector<std::string>{"connect live", "play cam?token=internal"});
  CHECK(pull.status()["cluster"] == true);
}
