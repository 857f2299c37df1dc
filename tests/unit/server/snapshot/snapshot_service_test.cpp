// server/snapshot/snapshot_service: on a worker loop of the test's own, requests for a stream's
// snapshot while its keyframe is decoded wait for that one decode; later ones get it from memory;
// a newer keyframe is decoded afresh; a request whose connection goes is cancelled; a stream
// nobody publishes, or one without video, is refused at once.
#include <doctest/doctest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "media/frame.hpp"
#include "server/live/stream_registry.hpp"
#include "server/snapshot/snapshot_service.hpp"
#include "server/snapshot/snapshot_stats.hpp"
#include "unit/server/loop_fixture.hpp"
#include "unit/server/snapshot/h264_keyframe.hpp"

using namespace sluice;
using namespace sluice::server;

namespace {

struct Waiter final : SnapshotWaiter {
  std::optional<int> status;
  SnapshotResult result = SnapshotResult::Error;
  std::vector<uint8_t> body;
  uint32_t timestamp = 0;
  std::string reason;
  void snapshot_ready(const SnapshotAnswer& a) override {
    CHECK(!status);  // answered once
    status = a.status;
    result = a.result;
    body.assign(a.jpeg.data(), a.jpeg.data() + a.jpeg.size());
    timestamp = a.keyframe_timestamp;
    reason = a.reason;
  }
};

// A tag body: FLV's AVC video header (key frame, packet type, composition time 0), then `data`.
media::FramePtr video(uint32_t ts, uint8_t packet_type, const std::vector<uint8_t>& data) {
  std::vector<uint8_t> body = {0x17, packet_type, 0, 0, 0};
  body.insert(body.end(), data.begin(), data.end());
  return media::make_frame(9, ts, Slice::adopt(std::move(body)));
}

struct Fixture {
  test::LoopFixture loop;
  StreamRegistry registry;
  config::AppConfig app;
  int publisher = 0;
  media::StreamHub* hub = nullptr;
  std::unique_ptr<SnapshotService> service;

  Fixture() {
    app.name = "live";
    app.type = config::AppType::Live;
    REQUIRE(registry.claim_publisher("live/cam", reinterpret_cast<const SessionPeer*>(&publisher), hub_options(app)) ==
            StreamRegistry::Claim::Claimed);
    hub = registry.find("live/cam");
    hub->start_publish();
    service = std::make_unique<SnapshotService>(*loop.loop, registry);
  }
  ~Fixture() {
    service->stop();
    loop.run_for(50);  // no decode left on the threadpool
    service.reset();
    registry.release_publisher("live/cam", reinterpret_cast<const SessionPeer*>(&publisher));
  }
  uint64_t decodes() const { return SnapshotStats::get().decodes.load(); }
};

}  // namespace

TEST_CASE("one decode per keyframe and size, however many ask") {
  test::Keyframe k = test::encode_h264();
  if (k.config.empty()) {
    MESSAGE("no libx264 in this libavcodec: skipped");
    return;
  }
  Fixture f;
  f.hub->publish(video(0, 0, k.config));
  f.hub->publish(video(1000, 1, k.nalus));
  const uint64_t before = f.decodes();

  std::vector<Waiter> waiters(10);
  for (Waiter& w : waiters) f.service->request(f.app, "cam", SnapshotParams{}, &w);
  for (const Waiter& w : waiters) CHECK(!w.status);  // waiting for the one decode
  Waiter gone;
  f.service->request(f.app, "cam", SnapshotParams{}, &gone);
  f.service->cancel(&gone);  // its connection closed meanwhile
  REQUIRE(f.loop.run_until([&] { return waiters.back().status.has_value(); }));
  CHECK(f.decodes() == before + 1);
  for (const Waiter& w : waiters) {
    CHECK(w.status == 200);
    CHECK(w.result == SnapshotResult::Decoded);
    CHECK(w.timestamp == 1000);
    CHECK(w.body == waiters[0].body);
  }
  CHECK(!gone.status);
  REQUIRE(waiters[0].body.size() > 100);

  // Later: from memory, at once.
  Waiter later;
  f.service->request(f.app, "cam", SnapshotParams{}, &later);
  CHECK(later.status == 200);
  CHECK(later.result == SnapshotResult::Cached);
  CHECK(later.body == waiters[0].body);

  // Another size is another decode of the same keyframe.
  Waiter small;
  f.service->request(f.app, "cam", SnapshotParams{160, 80}, &small);
  REQUIRE(f.loop.run_until([&] { return small.status.has_value(); }));
  CHECK(small.status == 200);
  CHECK(f.decodes() == before + 2);

  // A newer keyframe: decoded afresh.
  test::Keyframe brighter = test::encode_h264(10);
  f.hub->publish(video(2000, 1, brighter.nalus));
  Waiter next;
  f.service->request(f.app, "cam", SnapshotParams{}, &next);
  REQUIRE(f.loop.run_until([&] { return next.status.has_value(); }));
  CHECK(next.status == 200);
  CHECK(next.timestamp == 2000);
  CHECK(next.body != waiters[0].body);
  CHECK(f.decodes() == before + 3);
}

TEST_CASE("refused at once: no such stream, no video, not H.264 or HEVC") {
  Fixture f;
  Waiter none;
  f.service->request(f.app, "nobody", SnapshotParams{}, &none);
  CHECK(none.status == 404);
  CHECK(none.result == SnapshotResult::NoStream);

  // Audio only (an AAC sequence header and a frame).
  f.hub->publish(media::make_frame(8, 0, Slice::copy_of(std::string_view("\xaf\x00\x12\x10", 4))));
  f.hub->publish(media::make_frame(8, 23, Slice::copy_of(std::string_view("\xaf\x01\x21\x00", 4))));
  Waiter audio;
  f.service->request(f.app, "cam", SnapshotParams{}, &audio);
  CHECK(audio.status == 503);
  CHECK(audio.result == SnapshotResult::NoKeyframe);

  // VP9 in Enhanced RTMP: a keyframe, but not one this decodes.
  const std::vector<uint8_t> seq = {0x90, 'v', 'p', '0', '9', 1, 2, 3};
  const std::vector<uint8_t> key = {0x91, 'v', 'p', '0', '9', 4, 5, 6};
  f.hub->publish(media::make_frame(9, 0, Slice::copy_of(std::span<const uint8_t>(seq))));
  f.hub->publish(media::make_frame(9, 40, Slice::copy_of(std::span<const uint8_t>(key))));
  Waiter vp9;
  f.service->request(f.app, "cam", SnapshotParams{}, &vp9);
  CHECK(vp9.status == 415);
  CHECK(vp9.reason.find("VP9") != std::string::npos);
}
