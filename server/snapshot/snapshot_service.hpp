// SnapshotService: GET /{app}/{stream}/snapshot.jpg on one worker loop (docs/snapshots.md).
// The stream's latest keyframe, as its hub replays it to a joining player (its
// video sequence header, then its GOP cache from the keyframe), is decoded and encoded as a JPEG
// on the libuv threadpool (jpeg_maker.hpp), never on the loop.
//
// Cache: per stream, the JPEGs of its current keyframe, one per (width, quality). The keyframe's
// FramePtr is kept, so its address is its identity: a newer keyframe starts afresh. A request that
// comes while its JPEG is being made waits for that decode; later ones get the JPEG made. So each
// keyframe is decoded at most once per size and quality on a loop, however many ask.
//
// Bounds: kMaxStreams streams (the least recently asked ones go), kMaxVariants sizes each, one
// decode per stream at a time and kMaxDecodes on the whole server (the others queue, within the
// variant bound, or get 503 with Retry-After).
//
// Several workers: a stream published on another loop is mirrored here as an HTTP-FLV player's
// would be (the registry's hub, fed by the owner over the WorkerMesh, whose forwarder replays the
// GOP first). The service holds that mirror for kHoldMs after the last snapshot of it, and a
// request waits for the first keyframe up to kMirrorWaitMs, checked on each request and each tick.
//
// Waiters are answered through SnapshotWaiter::snapshot_ready(), at once or later on the loop;
// cancel() before a waiter goes.
#pragma once

#include <uv.h>

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/bytes.hpp"
#include "config/config.hpp"
#include "media/codec/flv_video.hpp"
#include "media/frame.hpp"
#include "server/io/loop_context.hpp"
#include "server/snapshot/snapshot_params.hpp"
#include "server/snapshot/snapshot_stats.hpp"

namespace sluice::server {

class StreamRegistry;

struct SnapshotAnswer {
  int status = 200;
  std::string reason;          // not 200: why, for the client
  uint32_t retry_after_s = 0;  // 503: when to ask again
  SnapshotResult result = SnapshotResult::Error;
  Slice jpeg;  // 200: shared by every request answered from it
  uint32_t width = 0;
  uint32_t height = 0;
  uint32_t quality = 0;
  SnapshotFormat format = SnapshotFormat::Jpeg;
  uint32_t keyframe_timestamp = 0;  // the keyframe's timestamp in the stream (ms)
  uint64_t keyframe_serial = 0;     // its number among the keyframes this loop decoded (the ETag)
  int64_t keyframe_seen_s = 0;      // when this loop first saw it (Last-Modified)
};

class SnapshotWaiter {
 public:
  virtual void snapshot_ready(const SnapshotAnswer& answer) = 0;

 protected:
  ~SnapshotWaiter() = default;
};

class SnapshotService {
 public:
  static constexpr size_t kMaxStreams = 16;
  static constexpr size_t kMaxVariants = 4;
  static constexpr int kMaxDecodes = 2;
  static constexpr uint64_t kHoldMs = 30'000;
  static constexpr uint64_t kMirrorWaitMs = 3'000;
  static constexpr uint64_t kIdleMs = 60'000;  // a stream's JPEGs unasked for this long are dropped

  SnapshotService(LoopContext& loop, StreamRegistry& registry);
  ~SnapshotService();
  SnapshotService(const SnapshotService&) = delete;
  SnapshotService& operator=(const SnapshotService&) = delete;

  // The snapshot of `name` (valid, admitted) of live app `app`; answers `w`, maybe before returning.
  void request(const config::AppConfig& app, const std::string& name, const SnapshotParams& params, SnapshotWaiter* w);
  void cancel(SnapshotWaiter* w);
  // Once a second: mirror waits that time out, holds that end, idle streams that go.
  void tick(uint64_t now_ms);
  // The server stops: mirrors are let go; waiters are answered 503.
  void stop();

 private:
  struct Variant;
  struct Stream;
  struct Job;
  struct Pending {
    SnapshotWaiter* waiter;
    config::AppRef app;
    std::string key;
    SnapshotParams params;
    uint64_t deadline_ms;
  };
  struct Hold {
    uint64_t since_ms;
    uint64_t until_ms;
  };
  enum class Look { Found, Wait, NoKeyframe, NoStream, Full };
  struct Lookup {
    Look look = Look::NoStream;
    media::FramePtr config, keyframe;
    uint32_t source_width = 0;
    bool has_video = false;
  };

  Lookup look(const config::AppConfig& app, const std::string& key);
  void serve(const std::string& key, Lookup& found, const SnapshotParams& params, SnapshotWaiter* w);
  void answer_refusal(const Lookup& l, SnapshotWaiter* w);
  void retry_pending(const std::string& key, bool expire_all);
  void try_start(const std::string& key);
  void start_queued();
  static void work(uv_work_t* req);
  static void after_work(uv_work_t* req, int status);
  void finished(Job& job);
  void evict_idle_stream();
  static bool busy(const Stream& s);

  LoopContext& loop_;
  StreamRegistry& registry_;
  std::unordered_map<std::string, std::unique_ptr<Stream>> streams_;
  std::vector<Pending> pending_;
  std::unordered_map<std::string, Hold> holds_;
  std::vector<Job*> jobs_;
  uint64_t serial_ = 0;
  bool stopping_ = false;
};

}  // namespace sluice::server
