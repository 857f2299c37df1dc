#include "server/snapshot/snapshot_service.hpp"

#include <algorithm>
#include <atomic>
#include <utility>

#include "media/stream_hub.hpp"
#include "media/subscriber.hpp"
#include "server/io/logging.hpp"
#include "server/io/wall_clock.hpp"
#include "server/live/live_join.hpp"
#include "server/live/stream_registry.hpp"
#include "server/snapshot/jpeg_maker.hpp"

namespace sluice::server {

namespace {

// Decodes running on the whole server (every loop's service).
std::atomic<int> g_decoding{0};

bool take_decode_slot() {
  int n = g_decoding.load(std::memory_order_relaxed);
  while (n < SnapshotService::kMaxDecodes) {
    if (g_decoding.compare_exchange_weak(n, n + 1, std::memory_order_relaxed)) return true;
  }
  return false;
}

// What a joining player would be replayed, read up to the first keyframe of the default video
// track (the GOP cache starts there): the video sequence header before it, and the keyframe.
struct KeyframeProbe final : media::Subscriber {
  media::StreamHub* hub = nullptr;
  media::FramePtr config, keyframe;
  void on_frame(const media::FramePtr& f) override {
    if (f->kind != media::FrameKind::Video || f->track != 0) return;
    if (f->sequence_header) {
      config = f;
    } else if (f->keyframe) {
      keyframe = f;
      hub->remove_subscriber(this);  // ends the replay here
    }
  }
};

// The codec payload (configuration record or NAL units) of a video frame's default track.
struct VideoPayload {
  media::VideoCodec codec = media::VideoCodec::Unknown;
  std::span<const uint8_t> data;
};
VideoPayload video_payload(const media::Frame& f) {
  VideoPayload v;
  auto head = media::parse_video_tag(f.payload.span());
  if (!head) return v;
  v.codec = head->codec();
  const media::TrackData* t = head->tracks.first();
  if (t && t->data_offset + t->data_size <= f.payload.size())
    v.data = f.payload.span().subspan(t->data_offset, t->data_size);
  return v;
}

// Another request's copy of a made answer: the same JPEG, shared.
SnapshotAnswer shared_answer(const SnapshotAnswer& made, SnapshotResult result) {
  SnapshotAnswer a;
  a.status = made.status;
  a.reason = made.reason;
  a.retry_after_s = made.retry_after_s;
  a.result = made.status == 200 ? result : made.result;
  a.jpeg = made.jpeg.share();
  a.width = made.width;
  a.height = made.height;
  a.quality = made.quality;
  a.format = made.format;
  a.keyframe_timestamp = made.keyframe_timestamp;
  a.keyframe_serial = made.keyframe_serial;
  a.keyframe_seen_s = made.keyframe_seen_s;
  return a;
}

SnapshotAnswer refusal(int status, SnapshotResult result, std::string reason, uint32_t retry_after_s = 0) {
  SnapshotAnswer a;
  a.status = status;
  a.result = result;
  a.reason = std::move(reason);
  a.retry_after_s = retry_after_s;
  return a;
}

}  // namespace

// One (width, quality) of one stream's keyframe.
struct SnapshotService::Variant {
  enum class State { Queued, Decoding, Done };
  uint32_t width = 0;  // 0: the source's
  uint32_t quality = 0;
  SnapshotFormat format = SnapshotFormat::Jpeg;
  State state = State::Queued;
  SnapshotAnswer answer;  // Done
  std::vector<SnapshotWaiter*> waiters;
  uint64_t used_ms = 0;
};

struct SnapshotService::Stream {
  media::FramePtr config, keyframe;  // the current keyframe: its pointer is its identity
  uint64_t serial = 0;
  int64_t seen_s = 0;
  std::vector<std::shared_ptr<Variant>> variants;
  bool decoding = false;
  uint64_t used_ms = 0;
};

struct SnapshotService::Job {
  uv_work_t req{};
  SnapshotService* owner = nullptr;  // null once the service is gone
  std::string key;
  std::shared_ptr<Variant> variant;
  media::FramePtr config, keyframe;  // kept alive for the spans of `in`
  uint64_t serial = 0;
  int64_t seen_s = 0;
  JpegJob in;
  JpegMade out;
};

// Decoding, or with requests waiting for a decode.
bool SnapshotService::busy(const Stream& s) {
  return s.decoding || std::any_of(s.variants.begin(), s.variants.end(),
                                   [](const auto& v) { return v->state != Variant::State::Done; });
}

SnapshotService::SnapshotService(LoopContext& loop, StreamRegistry& registry) : loop_(loop), registry_(registry) {}

// Jobs still on the threadpool finish without it (after_work frees them).
SnapshotService::~SnapshotService() {
  for (Job* j : jobs_) j->owner = nullptr;
}

SnapshotService::Lookup SnapshotService::look(const config::AppConfig& app, const std::string& key) {
  Lookup l;
  if (!registry_.is_live(key)) return l;
  const auto entry = registry_.entries().find(key);
  const bool here = entry != registry_.entries().end() && entry->second.publisher != nullptr;
  const uint64_t now = loop_.now_ms();
  auto hold = holds_.find(key);
  if (!here) {
    // Published on another loop: mirrored here while snapshots of it are asked for.
    if (hold == holds_.end()) {
      if (!live_join_hub(registry_, app, key)) {
        l.look = Look::Full;
        return l;
      }
      registry_.hold(key);
      hold = holds_.emplace(key, Hold{now, 0}).first;
    }
    hold->second.until_ms = now + kHoldMs;
  }
  media::StreamHub* hub = registry_.find(key);
  if (hub && hub->has_publisher()) {
    KeyframeProbe probe;
    probe.hub = hub;
    hub->add_subscriber(&probe);
    hub->remove_subscriber(&probe);
    l.config = std::move(probe.config);
    l.keyframe = std::move(probe.keyframe);
    l.source_width = hub->info().width;
    l.has_video = hub->info().has_video();
  }
  if (l.config && l.keyframe) {
    l.look = Look::Found;
  } else if (!here && hold != holds_.end() && now - hold->second.since_ms < kMirrorWaitMs) {
    l.look = Look::Wait;
  } else {
    l.look = Look::NoKeyframe;
  }
  return l;
}

void SnapshotService::request(const config::AppConfig& app, const std::string& name, const SnapshotParams& params,
                              SnapshotWaiter* w) {
  if (stopping_) {
    SnapshotStats::get().count(SnapshotResult::Busy);
    return w->snapshot_ready(refusal(503, SnapshotResult::Busy, "the server is stopping"));
  }
  std::string key = app.name + "/" + name;
  Lookup l = look(app, key);
  if (l.look == Look::Found) {
    serve(key, l, params, w);
    // The keyframe reached a mirror: the requests that waited for it need not wait for the tick.
    if (std::any_of(pending_.begin(), pending_.end(), [&](const Pending& p) { return p.key == key; })) {
      retry_pending(key, false);
    }
    return;
  }
  if (l.look != Look::Wait) return answer_refusal(l, w);
  pending_.push_back(Pending{w, loop_.keep(app), std::move(key), params, loop_.now_ms() + kMirrorWaitMs});
}

void SnapshotService::answer_refusal(const Lookup& l, SnapshotWaiter* w) {
  SnapshotAnswer a;
  switch (l.look) {
    case Look::NoStream: a = refusal(404, SnapshotResult::NoStream, "stream is not live"); break;
    case Look::Full:
      a = refusal(503, SnapshotResult::Busy, "the server holds its maximum of streams (rtmp.limits.max_streams)", 5);
      break;
    default:
      a = refusal(503, SnapshotResult::NoKeyframe,
                  l.has_video ? "the stream has no keyframe yet" : "the stream has no video (yet)", 2);
      break;
  }
  SnapshotStats::get().count(a.result);
  w->snapshot_ready(a);
}

void SnapshotService::serve(const std::string& key, Lookup& found, const SnapshotParams& params, SnapshotWaiter* w) {
  const VideoPayload video = video_payload(*found.keyframe);
  if (video.codec != media::VideoCodec::Avc && video.codec != media::VideoCodec::Hevc) {
    SnapshotStats::get().count(SnapshotResult::Error);
    return w->snapshot_ready(refusal(415, SnapshotResult::Error,
                                     "snapshots decode H.264 and HEVC; this stream's video is " +
                                         std::string(media::video_codec_name(video.codec))));
  }
  const uint64_t now = loop_.now_ms();
  auto it = streams_.find(key);
  if (it == streams_.end()) {
    if (streams_.size() >= kMaxStreams) evict_idle_stream();
    if (streams_.size() >= kMaxStreams) {
      SnapshotStats::get().count(SnapshotResult::Busy);
      return w->snapshot_ready(refusal(503, SnapshotResult::Busy, "too many snapshots are being made", 1));
    }
    it = streams_.emplace(key, std::make_unique<Stream>()).first;
  }
  Stream& s = *it->second;
  s.used_ms = now;
  if (s.keyframe != found.keyframe) {
    // A newer keyframe: what was made of the previous one goes (a decode running keeps its own
    // variant and answers its waiters); queued requests will get the new one.
    std::erase_if(s.variants, [](const auto& v) { return v->state != Variant::State::Queued; });
    s.keyframe = std::move(found.keyframe);
    s.config = std::move(found.config);
    s.serial = ++serial_;
    s.seen_s = wall_clock_ms() / 1000;
  }
  // A width at or over the source's is the source's size: one JPEG for all of them.
  const uint32_t width = found.source_width != 0 && params.width >= found.source_width ? 0 : params.width;
  auto v = std::find_if(s.variants.begin(), s.variants.end(), [&](const auto& x) {
    return x->width == width && x->quality == params.quality && x->format == params.format;
  });
  if (v != s.variants.end()) {
    (*v)->used_ms = now;
    if ((*v)->state != Variant::State::Done) return (*v)->waiters.push_back(w);
    SnapshotAnswer a = shared_answer((*v)->answer, SnapshotResult::Cached);
    SnapshotStats::get().count(a.result);
    return w->snapshot_ready(a);
  }
  if (s.variants.size() >= kMaxVariants) {
    // The least recently asked JPEG that is made goes; none: every slot is busy.
    auto done = std::min_element(s.variants.begin(), s.variants.end(), [](const auto& a, const auto& b) {
      const bool ad = a->state == Variant::State::Done, bd = b->state == Variant::State::Done;
      return ad != bd ? ad : a->used_ms < b->used_ms;
    });
    if ((*done)->state != Variant::State::Done) {
      SnapshotStats::get().count(SnapshotResult::Busy);
      return w->snapshot_ready(refusal(503, SnapshotResult::Busy, "too many snapshot sizes are being made", 1));
    }
    s.variants.erase(done);
  }
  auto made = std::make_shared<Variant>();
  made->width = width;
  made->quality = params.quality;
  made->format = params.format;
  made->used_ms = now;
  made->waiters.push_back(w);
  s.variants.push_back(std::move(made));
  try_start(key);
}

void SnapshotService::try_start(const std::string& key) {
  auto it = streams_.find(key);
  if (it == streams_.end() || it->second->decoding || stopping_) return;
  Stream& s = *it->second;
  auto v = std::find_if(s.variants.begin(), s.variants.end(),
                        [](const auto& x) { return x->state == Variant::State::Queued; });
  if (v == s.variants.end() || !take_decode_slot()) return;
  auto* job = new Job();
  job->req.data = job;
  job->owner = this;
  job->key = key;
  job->variant = *v;
  job->config = s.config;
  job->keyframe = s.keyframe;
  job->serial = s.serial;
  job->seen_s = s.seen_s;
  const VideoPayload config = video_payload(*s.config);
  const VideoPayload frame = video_payload(*s.keyframe);
  job->in = JpegJob{frame.codec, config.data, frame.data, (*v)->width, (*v)->quality, (*v)->format};
  (*v)->state = Variant::State::Decoding;
  s.decoding = true;
  if (int r = uv_queue_work(loop_.loop(), &job->req, &SnapshotService::work, &SnapshotService::after_work); r != 0) {
    g_decoding.fetch_sub(1, std::memory_order_relaxed);
    job->out.error = uv_strerror(r);
    finished(*job);
    delete job;
    return;
  }
  jobs_.push_back(job);
}

// Slots freed (here or, seen at the tick, on another loop): the streams with queued sizes try.
void SnapshotService::start_queued() {
  std::vector<std::string> keys;
  for (const auto& [key, s] : streams_) {
    if (!s->decoding && std::any_of(s->variants.begin(), s->variants.end(),
                                    [](const auto& v) { return v->state == Variant::State::Queued; })) {
      keys.push_back(key);
    }
  }
  for (const std::string& key : keys) try_start(key);
}

void SnapshotService::work(uv_work_t* req) {
  Job* job = static_cast<Job*>(req->data);
  job->out = make_jpeg(job->in);
}

void SnapshotService::after_work(uv_work_t* req, int status) {
  Job* job = static_cast<Job*>(req->data);
  g_decoding.fetch_sub(1, std::memory_order_relaxed);
  if (status != 0 && job->out.error.empty()) job->out.error = uv_strerror(status);
  if (job->owner) {
    SnapshotService* self = job->owner;
    std::erase(self->jobs_, job);
    self->finished(*job);
  }
  delete job;
}

void SnapshotService::finished(Job& job) {
  SnapshotStats& stats = SnapshotStats::get();
  stats.decodes.fetch_add(1, std::memory_order_relaxed);
  stats.decode_us.fetch_add(job.out.total_us, std::memory_order_relaxed);
  std::shared_ptr<Variant> v = job.variant;
  SnapshotAnswer& a = v->answer;
  if (job.out.error.empty()) {
    a.status = 200;
    a.result = SnapshotResult::Decoded;
    a.jpeg = Slice::adopt(std::move(job.out.jpeg));
    a.width = job.out.width;
    a.height = job.out.height;
    a.quality = v->quality;
    a.format = v->format;
    a.keyframe_timestamp = job.keyframe->timestamp;
    a.keyframe_serial = job.serial;
    a.keyframe_seen_s = job.seen_s;
    SLUICE_LOG_DEBUG("event=snapshot stream={} size={}x{} quality={} bytes={} decode_us={} total_us={}", job.key,
                     a.width, a.height, a.quality, a.jpeg.size(), job.out.decode_us, job.out.total_us);
  } else {
    stats.decode_failures.fetch_add(1, std::memory_order_relaxed);
    a = refusal(500, SnapshotResult::Error, "the keyframe could not be decoded: " + job.out.error);
    SLUICE_LOG_WARN("event=snapshot_failed stream={} reason=\"{}\"", job.key, job.out.error);
  }
  v->state = Variant::State::Done;
  if (auto it = streams_.find(job.key); it != streams_.end()) it->second->decoding = false;
  // Answering may bring the next request of a connection (and so new variants): waiters are
  // taken one at a time from the variant, which cancel() also edits.
  while (!v->waiters.empty()) {
    SnapshotWaiter* w = v->waiters.back();
    v->waiters.pop_back();
    stats.count(a.result);
    w->snapshot_ready(shared_answer(a, a.result));
  }
  start_queued();
}

void SnapshotService::cancel(SnapshotWaiter* w) {
  std::erase_if(pending_, [w](const Pending& p) { return p.waiter == w; });
  for (auto& [key, s] : streams_) {
    for (auto& v : s->variants) std::erase(v->waiters, w);
  }
  for (Job* j : jobs_) std::erase(j->variant->waiters, w);
}

void SnapshotService::retry_pending(const std::string& key, bool expire_all) {
  const uint64_t now = loop_.now_ms();
  for (size_t i = 0; i < pending_.size();) {
    if (pending_[i].key != key) {
      ++i;
      continue;
    }
    Lookup l = look(*pending_[i].app, key);
    if (l.look == Look::Wait && !expire_all && now < pending_[i].deadline_ms) {
      ++i;
      continue;
    }
    Pending p = std::move(pending_[i]);
    pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(i));
    if (l.look == Look::Wait) l.look = Look::NoKeyframe;
    if (l.look == Look::Found) {
      serve(key, l, p.params, p.waiter);
    } else {
      answer_refusal(l, p.waiter);
    }
    i = 0;  // an answer may have changed the list
  }
}

void SnapshotService::tick(uint64_t now_ms) {
  std::vector<std::string> waiting;
  for (const Pending& p : pending_) {
    if (std::find(waiting.begin(), waiting.end(), p.key) == waiting.end()) waiting.push_back(p.key);
  }
  for (const std::string& key : waiting) retry_pending(key, false);
  for (auto it = holds_.begin(); it != holds_.end();) {
    const bool wanted =
        std::any_of(pending_.begin(), pending_.end(), [&](const Pending& p) { return p.key == it->first; });
    if (!wanted && now_ms >= it->second.until_ms) {
      std::string key = it->first;
      it = holds_.erase(it);
      registry_.release(key);
    } else {
      ++it;
    }
  }
  std::erase_if(streams_, [now_ms](const auto& e) { return !busy(*e.second) && now_ms - e.second->used_ms > kIdleMs; });
  start_queued();  // a slot another loop held may be free now
}

void SnapshotService::evict_idle_stream() {
  auto victim = streams_.end();
  for (auto it = streams_.begin(); it != streams_.end(); ++it) {
    const Stream& s = *it->second;
    if (!busy(s) && (victim == streams_.end() || s.used_ms < victim->second->used_ms)) victim = it;
  }
  if (victim != streams_.end()) streams_.erase(victim);
}

void SnapshotService::stop() {
  if (stopping_) return;
  stopping_ = true;
  std::vector<Pending> waiting = std::move(pending_);
  pending_.clear();
  for (Pending& p : waiting) {
    SnapshotStats::get().count(SnapshotResult::Busy);
    p.waiter->snapshot_ready(refusal(503, SnapshotResult::Busy, "the server is stopping"));
  }
  for (auto& [key, hold] : holds_) registry_.release(key);
  holds_.clear();
}

}  // namespace sluice::server
