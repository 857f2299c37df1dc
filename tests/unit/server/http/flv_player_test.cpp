// HttpFlvPlayer's framing, without a socket: the FLV file header and one tag per frame, each tag
// one chunk when the response is chunked (HTTP/1.1), bare when it is close-delimited (HTTP/1.0);
// Ended once the publisher has left and the queue is drained, so the response can end.
#include <doctest/doctest.h>
#include <uv.h>

#include <cstdio>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "media/flv/flv.hpp"
#include "media/frame.hpp"
#include "server/http/flv_player.hpp"
#include "server/io/loop_context.hpp"
#include "server/io/stream_socket.hpp"
#include "server/io/write_batch.hpp"
#include "server/live/stream_registry.hpp"
#include "unit/server/idle_socket.hpp"

using namespace sluice;
using namespace sluice::server;
using Bytes = std::vector<uint8_t>;

namespace {

struct Fixture {
  uv_loop_t uv{};
  config::Config config;
  std::unique_ptr<LoopContext> loop;
  StreamRegistry registry;
  Fixture() {
    uv_loop_init(&uv);
    loop = std::make_unique<LoopContext>(&uv, config, 0);
  }
  ~Fixture() { uv_loop_close(&uv); }
};

media::FramePtr frame(uint8_t type, uint32_t ts, Bytes b) {
  return media::make_frame(type, ts, Slice::adopt(std::move(b)));
}

std::string bytes_of(WriteBatch& batch) {
  std::string out;
  for (const uv_buf_t& b : batch.finalize()) out.append(b.base, b.len);
  return out;
}

std::string chunk(const std::string& body) {
  char line[16];
  std::snprintf(line, sizeof line, "%zx\r\n", body.size());
  return line + body + "\r\n";
}

std::string flv_header(bool audio, bool video) {
  std::vector<uint8_t> h;
  media::write_flv_header(audio, video, h);
  return std::string(h.begin(), h.end());
}

std::string tag(const media::Frame& f) {
  uint8_t h[media::kFlvTagHeaderSize];
  auto size = static_cast<uint32_t>(f.payload.size());
  media::write_tag_header(f.rtmp_type, size, f.timestamp, h);
  uint8_t tail[4];
  media::write_previous_tag_size(size, tail);
  return std::string(h, h + sizeof h) + std::string(f.payload.data(), f.payload.data() + size) +
         std::string(tail, tail + 4);
}

}  // namespace

TEST_CASE("HTTP-FLV framing: chunked and close-delimited") {
  for (bool chunked : {true, false}) {
    CAPTURE(chunked);
    Fixture fx;
    IdleSocket socket(*fx.loop);
    media::StreamHub& hub = *fx.registry.get_or_create("live/cam", media::StreamHub::Options{});
    hub.start_publish();
    HttpFlvPlayer player(socket, fx.registry, "live/cam", hub, chunked, fx.config.rtmp.player_queue);

    WriteBatch empty;
    CHECK(player.fill(empty, 1 << 20) == HttpFlvPlayer::Fill::Idle);  // nothing yet, not even the header
    CHECK(empty.bytes() == 0);

    auto seq = frame(9, 0, {0x17, 0, 0, 0, 0, 1, 0x64, 0, 0x1f});
    auto key = frame(9, 40, {0x17, 1, 0, 0, 0, 0xaa, 0xbb, 0xcc});
    auto rtmp_only = frame(20, 40, {1, 2, 3});  // an AMF0 command: no FLV tag
    hub.publish(seq);
    hub.publish(key);
    hub.publish(rtmp_only);
    WriteBatch batch;
    CHECK(player.fill(batch, 1 << 20) == HttpFlvPlayer::Fill::Idle);
    std::string want = chunked ? chunk(flv_header(false, true)) + chunk(tag(*seq)) + chunk(tag(*key))
                               : flv_header(false, true) + tag(*seq) + tag(*key);
    CHECK(bytes_of(batch) == want);

    // The publisher leaves: what is queued goes out, then the response ends.
    auto last = frame(9, 80, {0x27, 1, 0, 0, 0, 0xdd});
    hub.publish(last);
    hub.end_publish();
    WriteBatch tail;
    CHECK(player.fill(tail, 1 << 20) == HttpFlvPlayer::Fill::Ended);
    CHECK(bytes_of(tail) == (chunked ? chunk(tag(*last)) : tag(*last)));
    WriteBatch after;
    CHECK(player.fill(after, 1 << 20) == HttpFlvPlayer::Fill::Ended);
    CHECK(after.bytes() == 0);
  }
}

TEST_CASE("HTTP-FLV: a stream that ends before its first frame still gets its file header") {
  Fixture fx;
  IdleSocket socket(*fx.loop);
  media::StreamHub& hub = *fx.registry.get_or_create("live/cam", media::StreamHub::Options{});
  HttpFlvPlayer player(socket, fx.registry, "live/cam", hub, true, fx.config.rtmp.player_queue);
  player.end();  // the server stops
  WriteBatch batch;
  CHECK(player.fill(batch, 1 << 20) == HttpFlvPlayer::Fill::Ended);
  CHECK(bytes_of(batch) == chunk(flv_header(true, true)));  // nothing known: both tracks announced
}
