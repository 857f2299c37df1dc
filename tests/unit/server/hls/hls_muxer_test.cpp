// HlsMuxer on a live hub, and its HlsDiskWriter: the snapshot is not ready before a whole segment,
// segments follow the GOPs, the end of a publication ends the segment being written and a new one
// is a discontinuity; a muxer that joins late starts from the hub's GOP cache; with hls.dir the
// complete segments and a standard playlist are written whole, the old ones removed, and a key that
// is no path below the directory writes nothing.
#include <doctest/doctest.h>
#include <uv.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "media/stream_hub.hpp"
#include "server/hls/hls_muxer.hpp"
#include "server/hls/hls_share.hpp"
#include "server/io/loop_context.hpp"
#include "server/live/publication.hpp"
#include "server/live/stream_registry.hpp"
#include "unit/server/loop_fixture.hpp"

using namespace sluice;
using namespace sluice::server;
using Bytes = std::vector<uint8_t>;
namespace fs = std::filesystem;

namespace {

// avcC: version 1, High profile, level 3.0, 4-byte lengths, one SPS, one PPS.
const Bytes kAvcConfig = {0x01, 0x64, 0x00, 0x1E, 0xFF, 0xE1, 0x00, 0x04, 0x67,
                          0x64, 0x00, 0x1E, 0x01, 0x00, 0x02, 0x68, 0xEE};

// The loop runs the disk writer's jobs (the fixture's end waits for them).
struct Fixture : test::LoopFixture {
  StreamRegistry registry;
  config::AppConfig app;
  std::shared_ptr<HlsShare> share = std::make_shared<HlsShare>("live/cam", 0);
  int updates = 0;

  Fixture() {
    app.hls.enabled = true;
    app.hls.variant = config::HlsVariant::MpegTs;
    app.hls.segment = std::chrono::milliseconds(1000);
    app.hls.window = 2;
  }
  std::unique_ptr<HlsMuxer> muxer(const std::string& key = "live/cam") {
    return std::make_unique<HlsMuxer>(*loop, registry, app, key, share, [this](HlsShare&) { ++updates; });
  }
};

// A publisher: 25 fps H.264 with a keyframe every second, and AAC between the video frames.
// It keeps the hub (as a publisher's claim would) while it lives.
struct Source {
  StreamRegistry& registry;
  std::string key;
  media::StreamHub& hub;
  std::optional<Publication> publication;
  explicit Source(StreamRegistry& r, const std::string& k = "live/cam")
      : registry(r), key(k), hub(*r.get_or_create(k, {})) {
    registry.hold(key);
    start();
  }
  ~Source() {
    publication.reset();
    registry.release(key);
  }
  void start() {
    publication.emplace(hub, 1000);
    send(9, 0, cat({0x17, 0, 0, 0, 0}, kAvcConfig));
    send(8, 0, {0xaf, 0, 0x11, 0x90});
  }
  void stop() { publication.reset(); }
  void av(uint32_t from, uint32_t to) {
    for (uint32_t t = from; t < to; t += 40) {
      const bool key = t % 1000 == 0;
      send(9, t, {uint8_t(key ? 0x17 : 0x27), 1, 0, 0, 0, 0, 0, 0, 2, uint8_t(key ? 0x65 : 0x41), uint8_t(t / 40)});
      send(8, t + 20, {0xaf, 1, 0x21, 0x10, uint8_t(t / 40)});
    }
  }
  void send(uint8_t type, uint32_t ts, Bytes payload) {
    std::optional<media::TimestampCorrector::Jump> jump;
    publication->publish(type, ts, Slice::adopt(std::move(payload)), 0, jump);
  }
  static Bytes cat(Bytes a, const Bytes& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  }
};

std::vector<const media::hls::Segment*> complete(const HlsSnapshot& s) {
  std::vector<const media::hls::Segment*> out;
  for (const auto& seg : s.segments) {
    if (seg.complete) out.push_back(&seg);
  }
  return out;
}

Bytes bytes_of(const media::hls::Segment& seg) {
  Bytes out;
  for (const auto& part : seg.parts) {
    const auto bytes = part.bytes.span();
    out.insert(out.end(), bytes.begin(), bytes.end());
  }
  return out;
}

std::string text(const Slice& s) { return {reinterpret_cast<const char*>(s.data()), s.size()}; }

size_t count(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + 1)) ++n;
  return n;
}

Bytes file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

std::string file_text(const fs::path& p) {
  const Bytes b = file(p);
  return {b.begin(), b.end()};
}

struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "sluice-hls-test-XXXXXX").string();
    path = ::mkdtemp(tmpl.data());
  }
  ~TempDir() { fs::remove_all(path); }
};

}  // namespace

TEST_CASE("segments follow the GOPs; a publication's end ends the segment, the next is a discontinuity") {
  Fixture fx;
  Source source(fx.registry);
  auto muxer = fx.muxer();
  auto snap = fx.share->snapshot();
  REQUIRE(snap);
  CHECK(snap->live);
  CHECK_FALSE(snap->ready);  // nothing a player could start with yet

  source.av(0, 1000);
  CHECK_FALSE(fx.share->snapshot()->ready);
  source.av(1000, 2520);
  snap = fx.share->snapshot();
  REQUIRE(snap->ready);
  auto done = complete(*snap);
  REQUIRE(done.size() == 2);
  CHECK(done[0]->msn == 0);
  CHECK(done[1]->msn == 1);
  for (const auto* seg : done) {
    CHECK(seg->duration == 90'000);  // one GOP: a second at 90 kHz
    const Bytes ts = bytes_of(*seg);
    REQUIRE(!ts.empty());
    CHECK(ts.size() % 188 == 0);
    CHECK(ts[0] == 0x47);
  }
  const std::string playlist = text(snap->playlist);
  CHECK(playlist.starts_with("#EXTM3U"));
  CHECK(count(playlist, "#EXTINF") == 2);
  CHECK(fx.updates > 2);

  source.stop();
  snap = fx.share->snapshot();
  CHECK_FALSE(snap->live);
  done = complete(*snap);
  REQUIRE(done.size() == 3);  // the segment under way ended with the publication
  // From 2000 to the end of the last frames (video 2480 + 40, audio 2500 + its 40 ms spacing here).
  CHECK(done[2]->duration >= 520 * 90);
  CHECK(done[2]->duration <= 540 * 90);
  CHECK(count(text(snap->playlist), "#EXTINF") == 2);  // the window

  source.start();
  source.av(3000, 4080);
  snap = fx.share->snapshot();
  CHECK(snap->live);
  done = complete(*snap);
  REQUIRE(!done.empty());
  CHECK(done.back()->msn == 3);  // the window keeps 2 complete segments + 2 (with the one under way)
  CHECK(done.back()->discontinuity);
  CHECK(text(snap->playlist).find("#EXT-X-DISCONTINUITY\n") != std::string::npos);
}

TEST_CASE("a muxer that starts on a live stream begins with the hub's GOP cache") {
  Fixture fx;
  Source source(fx.registry);
  source.av(0, 1480);  // the GOP cache: the keyframe at 1000 and what followed
  auto muxer = fx.muxer();
  source.av(1480, 2080);  // the keyframe at 2000 is cut once the frame after it came
  const auto snap = fx.share->snapshot();
  const auto done = complete(*snap);
  REQUIRE(done.size() == 1);  // 1000 to 2000, from the replayed keyframe on
  CHECK(done[0]->duration == 90'000);
  REQUIRE(!done[0]->parts.empty());
  CHECK(done[0]->parts.front().independent);
}

TEST_CASE("with hls.dir, whole segments and a standard playlist are written, and old segments removed") {
  TempDir dir;
  Fixture fx;
  fx.app.hls.dir = dir.path.string();
  Source source(fx.registry);
  auto muxer = fx.muxer();
  source.av(0, 5080);  // segments 0..4 complete (the writer's first job takes segment 0 alone)
  const fs::path stream = dir.path / "live" / "cam";
  // The second job writes segments 1 to 4, then the playlist, then removes segment 0.
  REQUIRE(fx.run_until([&] { return fs::exists(stream / "seg4.ts") && !fs::exists(stream / "seg0.ts"); }));

  const auto snap = fx.share->snapshot();
  const std::string index = file_text(stream / "index.m3u8");
  CHECK(index.starts_with("#EXTM3U"));
  CHECK(index.find("#EXT-X-PART") == std::string::npos);  // parts stay in memory
  CHECK(count(index, "#EXTINF") == 2);
  for (const auto* seg : complete(*snap)) {
    const std::string name = "seg" + std::to_string(seg->msn) + ".ts";
    if (seg->msn >= 3) {
      CHECK(index.find(name) != std::string::npos);
      CHECK(file(stream / name) == bytes_of(*seg));
    }
  }
  for (const auto& entry : fs::directory_iterator(stream)) CHECK_FALSE(entry.path().extension() == ".tmp");
}

TEST_CASE("a key that is no path below hls.dir writes nothing, and the stream is still served from memory") {
  TempDir dir;
  Fixture fx;
  fx.app.hls.dir = dir.path.string();
  Source source(fx.registry, "live/../../escape");
  auto muxer = fx.muxer("live/../../escape");
  source.av(0, 2040);
  fx.run_for(100);
  CHECK(fx.share->snapshot()->ready);
  CHECK(fs::is_empty(dir.path));
  CHECK_FALSE(fs::exists(dir.path.parent_path() / "escape"));
}
