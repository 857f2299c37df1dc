// RtmpService and RtmpConnection on a real loop with RTMP clients over 127.0.0.1 (the client side of
// protocol::Session): a publisher's stream reaches a player that joins later from the keyframe on and
// then live, and the player is told when the publisher leaves; the timeouts of every state (a
// handshake never made, a silent client pinged, then closed); the per-address limit; the API's close;
// and a stop tells players their stream ends before their connections close.
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "server/access/gate.hpp"
#include "server/live/stream_registry.hpp"
#include "server/rtmp/connection.hpp"
#include "server/rtmp/service.hpp"
#include "server/vod/files.hpp"
#include "unit/server/loop_fixture.hpp"
#include "unit/server/rtmp/rtmp_test_client.hpp"

using namespace sluice;
using namespace sluice::server;
using test::RtmpTestClient;
using Bytes = std::vector<uint8_t>;

namespace {

struct RtmpFixture : test::LoopFixture {
  StreamRegistry registry;
  VodFiles vod{&uv};
  std::unique_ptr<AccessGate> gate;
  std::unique_ptr<PublishServices> publish;
  std::unique_ptr<RtmpServices> services;
  std::unique_ptr<RtmpService> service;
  uint16_t port = 0;

  explicit RtmpFixture(uint32_t per_ip = 0) {
    config::AppConfig live;
    live.name = "live";
    config.apps.push_back(live);
    config.rtmp.listen = {{"127.0.0.1", 0}};
    config.limits.per_ip = per_ip;
    gate = std::make_unique<AccessGate>(*loop);
    publish.reset(new PublishServices{*loop, registry, *gate});
    services.reset(new RtmpServices{*publish, vod, nullptr});
    service = std::make_unique<RtmpService>(*loop, *services, nullptr, [] { return size_t{0}; });
    REQUIRE(service->start().ok());
    std::vector<std::string> bound;
    REQUIRE(service->listen(bound).ok());
    REQUIRE(bound.size() == 1);
    port = static_cast<uint16_t>(std::stoi(bound[0].substr(bound[0].rfind(':') + 1)));
  }
  ~RtmpFixture() {
    service->stop();
    service->close_all("test over");
    run_until([&] { return service->connections().empty(); });  // they go once their handles closed
    service->close_handles();
    gate->close();
  }

  std::unique_ptr<RtmpTestClient> client() { return std::make_unique<RtmpTestClient>(&uv, port, "live"); }
  // A client with a stream, connected.
  std::unique_ptr<RtmpTestClient> with_stream() {
    auto c = client();
    REQUIRE(run_until([&] { return c->connected; }));
    c->create_stream();
    REQUIRE(run_until([&] { return c->stream_id != 0; }));
    return c;
  }
  RtmpConnection* only_connection() {
    REQUIRE(service->connections().size() == 1);
    return *service->connections().begin();
  }
};

Bytes video_sequence_header() { return {0x17, 0, 0, 0, 0, 1, 0x64, 0, 0x1f, 0xff, 0xe0, 0}; }
Bytes keyframe(uint8_t mark) { return {0x17, 1, 0, 0, 0, 0, 0, 0, 2, 0x65, mark}; }
Bytes inter_frame(uint8_t mark) { return {0x27, 1, 0, 0, 0, 0, 0, 0, 2, 0x41, mark}; }
Bytes audio_frame(uint8_t mark) { return {0xaf, 1, 0x21, mark}; }

bool same(const RtmpTestClient::Media& m, uint8_t type, uint32_t ts, const Bytes& payload) {
  return m.type == type && m.timestamp == ts && m.payload == payload;
}

}  // namespace

TEST_CASE("a player that joins later gets the stream from its keyframe, then live, then the publisher's end") {
  RtmpFixture fx;
  auto publisher = fx.with_stream();
  publisher->publish("cam");
  REQUIRE(fx.run_until([&] { return publisher->got("NetStream.Publish.Start"); }));
  publisher->send_media(9, 0, video_sequence_header());
  publisher->send_media(9, 0, inter_frame(1));  // before the first keyframe: never played
  publisher->send_media(9, 40, keyframe(2));
  publisher->send_media(8, 50, audio_frame(3));
  publisher->send_media(9, 80, inter_frame(4));
  REQUIRE(fx.run_until([&] { return fx.registry.find("live/cam") && fx.registry.find("live/cam")->frames_in() == 5; }));

  auto player = fx.with_stream();
  player->play("cam");
  REQUIRE(fx.run_until([&] { return player->media.size() >= 4; }));
  CHECK(player->got("NetStream.Play.Start"));
  publisher->send_media(9, 120, inter_frame(5));
  REQUIRE(fx.run_until([&] { return player->media.size() >= 5; }));
  fx.run_for(150);  // a held write would come within write_delay (100 ms)
  const auto& m = player->media;
  REQUIRE(m.size() == 5);
  CHECK(same(m[0], 9, 0, video_sequence_header()));
  CHECK(same(m[1], 9, 40, keyframe(2)));
  CHECK(same(m[2], 8, 50, audio_frame(3)));
  CHECK(same(m[3], 9, 80, inter_frame(4)));
  CHECK(same(m[4], 9, 120, inter_frame(5)));

  publisher->delete_stream();
  REQUIRE(fx.run_until([&] { return player->got("NetStream.Play.UnpublishNotify"); }));
  CHECK_FALSE(player->closed());  // a player waits for the next publisher
  CHECK_FALSE(fx.registry.is_live("live/cam"));
}

TEST_CASE("a connection that never makes its handshake is closed at rtmp.handshake_timeout") {
  RtmpFixture fx;
  RtmpTestClient mute(&fx.uv, fx.port, "live", false);
  REQUIRE(fx.run_until([&] { return fx.service->connections().size() == 1; }));
  const uint64_t timeout = static_cast<uint64_t>(fx.config.rtmp.handshake_timeout.count());
  fx.service->tick(fx.loop->now_ms() + timeout - 1000);
  fx.run_for(50);
  CHECK_FALSE(mute.closed());
  fx.service->tick(fx.loop->now_ms() + timeout + 1000);
  REQUIRE(fx.run_until([&] { return mute.closed(); }));
  CHECK(mute.closed_why == "eof");
  CHECK(fx.service->connections().empty());
}

TEST_CASE("a silent client is pinged at rtmp.ping_interval, and closed at rtmp.idle_timeout") {
  RtmpFixture fx;
  auto quiet = fx.with_stream();
  RtmpConnection* c = fx.only_connection();
  const uint64_t received = c->bytes_in();
  const uint64_t ping = static_cast<uint64_t>(fx.config.rtmp.ping_interval.count());
  const uint64_t idle = static_cast<uint64_t>(fx.config.rtmp.idle_timeout.count());
  fx.service->tick(fx.loop->now_ms() + ping + 1000);
  // The client's session answers the ping by itself: the answer is what arrives.
  REQUIRE(fx.run_until([&] { return c->bytes_in() > received; }));
  CHECK_FALSE(quiet->closed());
  fx.service->tick(fx.loop->now_ms() + idle + 1000);
  REQUIRE(fx.run_until([&] { return quiet->closed(); }));
}

TEST_CASE("limits.per_ip: a connection past the address's limit is closed, the others stay") {
  RtmpFixture fx(2);
  auto a = fx.with_stream();
  auto b = fx.with_stream();
  auto c = fx.client();
  REQUIRE(fx.run_until([&] { return c->closed(); }));
  CHECK_FALSE(c->connected);
  fx.run_for(50);
  CHECK_FALSE(a->closed());
  CHECK_FALSE(b->closed());
  a.reset();  // its slot is given back
  REQUIRE(fx.run_until([&] { return fx.service->connections().size() == 1; }));
  auto d = fx.with_stream();
  CHECK_FALSE(d->closed());
}

TEST_CASE("the API closes a connection by its id, and knows no other") {
  RtmpFixture fx;
  auto client = fx.with_stream();
  const uint64_t id = fx.only_connection()->id();
  CHECK_FALSE(fx.service->close_client(id + 1000, "closed through the API"));
  CHECK_FALSE(fx.service->control_recording("live/cam", true).has_value());  // not published here
  CHECK(fx.service->close_client(id, "closed through the API"));
  REQUIRE(fx.run_until([&] { return client->closed(); }));
}

TEST_CASE("a stop tells the players their stream ends, then closes every connection") {
  RtmpFixture fx;
  auto publisher = fx.with_stream();
  publisher->publish("cam");
  REQUIRE(fx.run_until([&] { return publisher->got("NetStream.Publish.Start"); }));
  publisher->send_media(9, 0, keyframe(1));
  auto player = fx.with_stream();
  player->play("cam");
  REQUIRE(fx.run_until([&] { return player->media.size() == 1; }));

  fx.service->stop();
  fx.service->end_publishers("server stopped");
  fx.service->shutdown_gracefully();
  REQUIRE(fx.run_until([&] { return player->closed() && publisher->closed(); }));
  CHECK(player->got("NetStream.Play.UnpublishNotify"));
  CHECK(player->closed_why == "eof");
}

TEST_CASE("a second publisher takes the name over: the player sees no end, the timestamps go on, the first is told") {
  RtmpFixture fx;
  auto first = fx.with_stream();
  first->publish("cam");
  REQUIRE(fx.run_until([&] { return first->got("NetStream.Publish.Start"); }));
  first->send_media(9, 5000, video_sequence_header());
  first->send_media(9, 5000, keyframe(1));
  first->send_media(9, 5040, inter_frame(2));
  auto player = fx.with_stream();
  player->play("cam");
  REQUIRE(fx.run_until([&] { return player->media.size() == 3; }));

  auto second = fx.with_stream();  // its clock starts at 0, as a reconnecting encoder's does
  second->publish("cam");
  REQUIRE(fx.run_until([&] { return second->got("NetStream.Publish.Start"); }));
  REQUIRE(fx.run_until([&] { return first->got("NetStream.Publish.BadName"); }));
  first->send_media(9, 5080, inter_frame(3));  // a frozen encoder waking up: reaches nobody
  second->send_media(9, 0, video_sequence_header());
  second->send_media(9, 0, keyframe(4));
  second->send_media(9, 40, inter_frame(5));
  REQUIRE(fx.run_until([&] { return player->media.size() >= 6; }));
  fx.run_for(150);
  const auto& m = player->media;
  REQUIRE(m.size() == 6);
  const uint32_t on = 5040 + 40;  // one frame interval after the first publication's last frame
  CHECK(same(m[3], 9, on, video_sequence_header()));
  CHECK(same(m[4], 9, on, keyframe(4)));
  CHECK(same(m[5], 9, on + 40, inter_frame(5)));
  CHECK_FALSE(player->got("NetStream.Play.UnpublishNotify"));
  CHECK_FALSE(player->closed());

  // The replaced connection closes at a tick a second later; the new publisher stays.
  fx.service->tick(fx.loop->now_ms() + 1500);
  REQUIRE(fx.run_until([&] { return first->closed(); }));
  CHECK_FALSE(second->closed());
  const auto& e = fx.registry.entries().at("live/cam");
  CHECK(e.takeovers == 1);
  CHECK(e.published_since_ms > 0);
}

TEST_CASE("publish_conflict: reject refuses a second publisher while the first one sends") {
  RtmpFixture fx;
  fx.config.apps[0].publish_conflict = config::PublishConflict::Reject;
  auto first = fx.with_stream();
  first->publish("cam");
  REQUIRE(fx.run_until([&] { return first->got("NetStream.Publish.Start"); }));
  first->send_media(9, 0, keyframe(1));
  auto second = fx.with_stream();
  second->publish("cam");
  REQUIRE(fx.run_until([&] { return second->got("NetStream.Publish.BadName"); }));
  REQUIRE(fx.run_until([&] { return second->closed(); }));
  CHECK_FALSE(first->closed());
  CHECK_FALSE(first->got("NetStream.Publish.BadName"));
}
