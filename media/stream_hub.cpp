#include "media/stream_hub.hpp"

#include <algorithm>
#include <cstring>

namespace sluice::media {

namespace {

GopCache::Limits gop_limits(const StreamHub::Options& o) {
  return GopCache::Limits{o.gop_max_frames, o.gop_max_bytes, o.audio_only_frames};
}

bool same_bytes(const Frame& a, const Frame& b) {
  return a.payload.size() == b.payload.size() &&
         (a.payload.empty() || std::memcmp(a.payload.data(), b.payload.data(), a.payload.size()) == 0);
}

}  // namespace

StreamHub::StreamHub(std::string name) : StreamHub(std::move(name), Options{}) {}

StreamHub::StreamHub(std::string name, Options options)
    : name_(std::move(name)), options_(options), gop_(gop_limits(options)) {}

void StreamHub::start_publish() {
  if (publishing_) clear_caches();  // republish without an end: the old session's state is stale
  publishing_ = true;
  ++stats_.publish_sessions;
  for_each_subscriber([](Subscriber* s) { s->on_publish_start(); });
}

void StreamHub::end_publish() {
  if (!publishing_) return;
  publishing_ = false;
  clear_caches();
  for_each_subscriber([](Subscriber* s) { s->on_publish_end(); });
}

void StreamHub::publish(FramePtr f) {
  if (!publishing_ || !f) return;
  ++stats_.frames_in;
  stats_.bytes_in += f->payload.size();
  switch (f->kind) {
    case FrameKind::Video: ++stats_.video_frames_in; break;
    case FrameKind::Audio: ++stats_.audio_frames_in; break;
    case FrameKind::Data: ++stats_.data_frames_in; break;
  }
  if (f->keyframe) ++stats_.keyframes_in;
  update_caches(f);
  // The hot path: one virtual call per subscriber with a reference to the one shared frame.
  for_each_subscriber([&f](Subscriber* s) { s->on_frame(f); });
}

void StreamHub::update_caches(const FramePtr& f) {
  info_.update(*f);
  if (f->metadata) {
    metadata_ = f;
  } else if (f->sequence_header) {
    remember_sequence_header(f);
  } else if (options_.gop_cache) {
    gop_.push(f);
  }
}

void StreamHub::remember_sequence_header(const FramePtr& f) {
  for (FramePtr& cached : sequence_headers_) {
    if (cached->kind == f->kind && cached->track == f->track) {
      if (!same_bytes(*cached, *f)) gop_.drop_until_keyframe();  // rule 6
      cached = f;
      return;
    }
  }
  sequence_headers_.push_back(f);
}

void StreamHub::clear_caches() {
  metadata_.reset();
  sequence_headers_.clear();
  gop_.clear();
  info_.reset();
}

void StreamHub::add_subscriber(Subscriber* s) {
  if (!s || is_subscribed(s)) return;
  // Listed before the replay, so that a removal from inside the replay finds it.
  subscribers_.push_back(s);
  if (publishing_) replay_to(s);
}

void StreamHub::remove_subscriber(Subscriber* s) {
  auto it = std::find(subscribers_.begin(), subscribers_.end(), s);
  if (!s || it == subscribers_.end()) return;
  ++removals_;
  if (iterating_ > 0) {
    *it = nullptr;
    ++vacant_;
  } else {
    subscribers_.erase(it);
  }
}

// Order matters to decoders: metadata, then video and audio configuration, then the GOP.
void StreamHub::replay_to(Subscriber* s) {
  if (metadata_ && !replay_frame(s, metadata_)) return;
  for (FrameKind kind : {FrameKind::Video, FrameKind::Audio}) {
    for (size_t i = 0; i < sequence_headers_.size(); ++i) {
      if (sequence_headers_[i]->kind == kind && !replay_frame(s, sequence_headers_[i])) return;
    }
  }
  for (size_t i = 0; i < gop_.frames().size(); ++i) {
    if (!replay_frame(s, gop_.frames()[i])) return;
  }
}

// Returns false once `s` has been removed, so that the replay stops.
bool StreamHub::replay_frame(Subscriber* s, const FramePtr& cached) {
  const uint64_t removals_before = removals_;
  const FramePtr f = cached;  // a callback must not be left holding a reference into our vectors
  s->on_frame(f);
  return removals_ == removals_before || is_subscribed(s);
}

bool StreamHub::is_subscribed(const Subscriber* s) const {
  return std::find(subscribers_.begin(), subscribers_.end(), s) != subscribers_.end();
}

template <typename Fn>
void StreamHub::for_each_subscriber(Fn&& fn) {
  ++iterating_;
  // Subscribers added meanwhile are appended past `n`: they got their replay already.
  const size_t n = subscribers_.size();
  for (size_t i = 0; i < n; ++i) {
    if (Subscriber* s = subscribers_[i]) fn(s);
  }
  --iterating_;
  if (iterating_ == 0 && vacant_ > 0) compact();
}

void StreamHub::compact() {
  subscribers_.erase(std::remove(subscribers_.begin(), subscribers_.end(), nullptr), subscribers_.end());
  vacant_ = 0;
}

}  // namespace sluice::media
