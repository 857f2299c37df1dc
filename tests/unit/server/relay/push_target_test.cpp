// PushTarget's state machine against a real RTMP server side (RtmpPeer, on the same loop): it goes
// live and sends the stream from the hub's keyframe on, ends a publish with FCUnpublish and
// deleteStream behind the last frame, and after a refusal, a lost connection or a host that never
// answers it waits its backoff and tries the next URL.
#include <doctest/doctest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "media/stream_hub.hpp"
#include "server/live/publication.hpp"
#include "server/relay/push_target.hpp"
#include "unit/server/relay/relay_fixture.hpp"
#include "unit/server/relay/rtmp_peer.hpp"

using namespace sluice;
using server::PushTarget;
using test::Bytes;
using test::RelayFixture;
using test::RtmpPeer;

namespace {

// A publisher of live/cam: it keeps the hub (as a claim would) while its publication lasts.
struct Source {
  server::StreamRegistry& registry;
  media::StreamHub& hub;
  std::optional<server::Publication> publication;
  explicit Source(RelayFixture& fx) : registry(fx.registry), hub(*fx.registry.get_or_create("live/cam", {})) {
    registry.hold("live/cam");
    publication.emplace(hub, 1000);
  }
  ~Source() {
    publication.reset();
    registry.release("live/cam");
  }
  void send(uint8_t type, uint32_t ts, Bytes payload) {
    std::optional<media::TimestampCorrector::Jump> jump;
    publication->publish(type, ts, Slice::adopt(std::move(payload)), 0, jump);
  }
};

server::RelayUrl url_of(const RtmpPeer& peer) { return *server::RelayUrl::parse(peer.url("ingest")); }

std::unique_ptr<PushTarget> push_to(RelayFixture& fx, Source& source, std::vector<server::RelayUrl> urls) {
  auto t = std::make_unique<PushTarget>(fx.services, "live#0", std::move(urls), "cam-out", false, true, "live/cam",
                                        source.hub);
  t->start();
  return t;
}

bool same(const RtmpPeer::Media& m, uint8_t type, uint32_t ts, const Bytes& payload) {
  return m.type == type && m.timestamp == ts && m.payload == payload;
}

}  // namespace

TEST_CASE("a push goes live, sends the stream from the hub's keyframe on, and ends it behind the last frame") {
  RelayFixture fx;
  RtmpPeer peer(fx.loop->loop(), {});
  Source source(fx);
  source.send(18, 0, test::metadata());
  source.send(9, 0, test::video_sequence_header());
  source.send(8, 0, test::audio_sequence_header());
  source.send(9, 0, test::inter_frame(1));  // before any keyframe: a target never gets it
  source.send(9, 40, test::keyframe(2));
  source.send(8, 50, test::audio_frame(3));
  source.send(9, 80, test::inter_frame(4));

  auto target = push_to(fx, source, {url_of(peer)});
  CHECK(target->state() == PushTarget::State::Connecting);
  REQUIRE(fx.run_until([&] { return target->state() == PushTarget::State::Live; }));
  CHECK(peer.log() == std::vector<std::string>{"connect ingest", "publish cam-out"});

  source.send(9, 120, test::inter_frame(5));
  source.send(8, 130, test::audio_frame(6));
  REQUIRE(fx.run_until([&] { return peer.media().size() >= 8; }));
  fx.run_for(50);  // nothing more comes
  const auto& m = peer.media();
  REQUIRE(m.size() == 8);
  CHECK(m[0].type == 18);  // the metadata first, then the sequence headers, then the GOP
  CHECK(same(m[1], 9, 0, test::video_sequence_header()));
  CHECK(same(m[2], 8, 0, test::audio_sequence_header()));
  CHECK(same(m[3], 9, 40, test::keyframe(2)));
  CHECK(same(m[4], 8, 50, test::audio_frame(3)));
  CHECK(same(m[5], 9, 80, test::inter_frame(4)));
  CHECK(same(m[6], 9, 120, test::inter_frame(5)));
  CHECK(same(m[7], 8, 130, test::audio_frame(6)));

  const auto status = target->status();
  CHECK(status["state"] == "live");
  CHECK(status["connects"] == 1);
  CHECK(status["failures"] == 0);
  CHECK(status["bytes_out"].get<uint64_t>() > 0);

  source.send(9, 160, test::inter_frame(7));
  target->stop("source ended");  // queued behind frame 7
  CHECK(target->state() == PushTarget::State::Stopped);
  REQUIRE(fx.run_until([&] { return peer.saw("deleteStream") && peer.open_connections() == 0; }));
  CHECK(same(peer.media().back(), 9, 160, test::inter_frame(7)));
  CHECK(peer.log() ==
        std::vector<std::string>{"connect ingest", "publish cam-out", "FCUnpublish cam-out", "deleteStream"});
  REQUIRE(fx.run_until([&] { return fx.draining.empty(); }));
}

TEST_CASE("a refused publish waits its backoff, then tries the next URL") {
  RelayFixture fx;
  RtmpPeer refusing(fx.loop->loop(), {.accept_publish = false});
  RtmpPeer taking(fx.loop->loop(), {});
  Source source(fx);
  source.send(9, 0, test::keyframe(1));

  auto target = push_to(fx, source, {url_of(refusing), url_of(taking)});
  REQUIRE(fx.run_until([&] { return target->state() == PushTarget::State::Waiting; }));
  CHECK(refusing.saw("publish cam-out"));
  auto status = target->status();
  CHECK(status["last_error"].get<std::string>().starts_with("publish refused: NetStream.Publish.BadName"));
  CHECK(status["failures"] == 1);
  CHECK(status["url"] == taking.url("ingest"));  // the next one, once the wait is over

  target->on_tick(fx.loop->now_ms());  // the first delay is at least half a second
  CHECK(target->state() == PushTarget::State::Waiting);
  target->on_tick(fx.loop->now_ms() + 1000);  // and at most a second
  CHECK(target->state() == PushTarget::State::Connecting);
  REQUIRE(fx.run_until([&] { return target->state() == PushTarget::State::Live; }));
  CHECK(taking.saw("publish cam-out"));
  status = target->status();
  CHECK(status["connects"] == 2);
  REQUIRE(fx.run_until([&] { return !taking.media().empty(); }));
  CHECK(same(taking.media().front(), 9, 0, test::keyframe(1)));
  CHECK(refusing.media().empty());
}

TEST_CASE("a refused connect is a failure with the server's reason") {
  RelayFixture fx;
  RtmpPeer refusing(fx.loop->loop(), {.accept_connect = false});
  Source source(fx);
  auto target = push_to(fx, source, {url_of(refusing)});
  REQUIRE(fx.run_until([&] { return target->state() == PushTarget::State::Waiting; }));
  CHECK(target->status()["last_error"] == "connect refused: refused by the test");
  CHECK_FALSE(refusing.saw("publish cam-out"));
}

TEST_CASE("a lost connection is retried after the backoff, and the target gets the stream from a keyframe again") {
  RelayFixture fx;
  RtmpPeer peer(fx.loop->loop(), {});
  Source source(fx);
  source.send(9, 0, test::video_sequence_header());
  source.send(9, 0, test::keyframe(1));
  auto target = push_to(fx, source, {url_of(peer)});
  REQUIRE(fx.run_until([&] { return target->state() == PushTarget::State::Live && peer.media().size() == 2; }));
  source.send(9, 40, test::inter_frame(2));
  REQUIRE(fx.run_until([&] { return peer.media().size() == 3; }));

  peer.drop_all();
  REQUIRE(fx.run_until([&] { return target->state() == PushTarget::State::Waiting; }));
  CHECK(target->status()["last_error"] == "peer closed");
  source.send(9, 80, test::inter_frame(3));  // while waiting: lost for this target
  source.send(9, 120, test::keyframe(4));
  source.send(9, 160, test::inter_frame(5));

  target->on_tick(fx.loop->now_ms() + 1000);
  REQUIRE(fx.run_until([&] { return target->state() == PushTarget::State::Live && peer.media().size() == 6; }));
  CHECK(peer.accepted() == 2);
  const auto& m = peer.media();  // the second connection: the sequence header, then the GOP of keyframe 4
  CHECK(same(m[3], 9, 0, test::video_sequence_header()));
  CHECK(same(m[4], 9, 120, test::keyframe(4)));
  CHECK(same(m[5], 9, 160, test::inter_frame(5)));
  CHECK(target->status()["connects"] == 2);
}

TEST_CASE("a host that takes the connection and never answers times out, and is tried again") {
  RelayFixture fx;
  RtmpPeer hung(fx.loop->loop(), {.silent = true});
  Source source(fx);
  auto target = push_to(fx, source, {url_of(hung)});
  REQUIRE(fx.run_until([&] { return hung.accepted() == 1; }));
  const uint64_t timeout = static_cast<uint64_t>(fx.config.rtmp.handshake_timeout.count());
  target->on_tick(fx.loop->now_ms() + timeout / 2);
  CHECK(target->state() == PushTarget::State::Connecting);
  // Past the setup timeout: the connection closes, and the time given is past the backoff too.
  target->on_tick(fx.loop->now_ms() + timeout + 1);
  auto status = target->status();
  CHECK(status["last_error"] == "connection timeout");
  CHECK(status["failures"] == 1);
  CHECK(status["connects"] == 2);
  CHECK(target->state() == PushTarget::State::Connecting);
  REQUIRE(fx.run_until([&] { return hung.accepted() == 2; }));
}
