// LiveSubscriber's notices, without a socket: the end of a publication (and a new start) goes out
// after every frame queued before it, whatever the batch size and however many fills it takes.
#include <doctest/doctest.h>
#include <uv.h>

#include <memory>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "media/frame.hpp"
#include "server/io/loop_context.hpp"
#include "server/io/stream_socket.hpp"
#include "server/io/write_batch.hpp"
#include "server/live/live_subscriber.hpp"
#include "server/live/stream_registry.hpp"
#include "unit/server/idle_socket.hpp"

using namespace sluice;
using namespace sluice::server;

namespace {

// Writes "f<ts> " per frame and "END " / "START " per notice.
class TextPlayer final : public LiveSubscriber {
 public:
  TextPlayer(StreamSocket& socket, StreamRegistry& registry, media::StreamHub& hub,
             const config::PlayerQueueConfig& queue)
      : LiveSubscriber(socket, registry, "live/cam", hub, queue, "") {
    subscribe();
  }
  void on_publish_end() override { queue_notice(Notice::PublishEnd); }
  void on_publish_start() override { queue_notice(Notice::PublishStart); }
  bool fill(WriteBatch& batch, size_t max_bytes) { return fill_frames(batch, max_bytes); }
  void pause() { clear_queue(); }

 private:
  bool wants(const media::Frame&) const override { return true; }
  bool started() const override { return true; }
  void append(const media::Frame& f, WriteBatch& batch) override {
    text(batch, "f" + std::to_string(f.timestamp) + " ");
  }
  void append_notice(Notice n, WriteBatch& batch) override { text(batch, n == Notice::PublishEnd ? "END " : "START "); }
  static void text(WriteBatch& batch, const std::string& s) {
    batch.add_bytes({reinterpret_cast<const uint8_t*>(s.data()), s.size()});
  }
};

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

media::FramePtr audio(uint32_t ts) { return media::make_frame(8, ts, Slice::adopt(std::vector<uint8_t>(100, 0xaf))); }

// Fills until nothing is left, `max_bytes` per fill; the whole output.
std::string drain(TextPlayer& p, size_t max_bytes) {
  std::string out;
  for (int i = 0; i < 1000; ++i) {
    WriteBatch batch;
    bool more = p.fill(batch, max_bytes);
    for (const uv_buf_t& b : batch.finalize()) out.append(b.base, b.len);
    if (!more) break;
  }
  return out;
}

}  // namespace

TEST_CASE("the end of a publication follows the frames queued before it") {
  Fixture fx;
  IdleSocket socket(*fx.loop);
  media::StreamHub& hub = *fx.registry.get_or_create("live/cam", media::StreamHub::Options{});
  hub.start_publish();
  TextPlayer player(socket, fx.registry, hub, fx.config.rtmp.player_queue);
  for (uint32_t ts : {0u, 20u, 40u}) hub.publish(audio(ts));
  hub.end_publish();
  CHECK(drain(player, 1 << 20) == "f0 f20 f40 END ");
  CHECK(drain(player, 1 << 20).empty());
}

TEST_CASE("with small batches the notice still waits for the last frame before it") {
  Fixture fx;
  IdleSocket socket(*fx.loop);
  media::StreamHub& hub = *fx.registry.get_or_create("live/cam", media::StreamHub::Options{});
  hub.start_publish();
  TextPlayer player(socket, fx.registry, hub, fx.config.rtmp.player_queue);
  for (uint32_t ts = 0; ts < 10; ++ts) hub.publish(audio(ts));
  hub.end_publish();
  // A republish before the player has drained: its frames come after END and START.
  hub.start_publish();
  hub.publish(audio(100));
  hub.publish(audio(120));
  CHECK(drain(player, 1) == "f0 f1 f2 f3 f4 f5 f6 f7 f8 f9 END START f100 f120 ");
}

TEST_CASE("a notice with nothing queued goes out at the next fill; dropping the queue makes it due") {
  Fixture fx;
  IdleSocket socket(*fx.loop);
  media::StreamHub& hub = *fx.registry.get_or_create("live/cam", media::StreamHub::Options{});
  hub.start_publish();
  TextPlayer player(socket, fx.registry, hub, fx.config.rtmp.player_queue);
  hub.end_publish();
  CHECK(drain(player, 1 << 20) == "END ");
  hub.start_publish();
  hub.publish(audio(5));
  hub.end_publish();
  player.pause();
  CHECK(drain(player, 1 << 20) == "START END ");
}
