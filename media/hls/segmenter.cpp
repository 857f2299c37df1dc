#include "media/hls/segmenter.hpp"

#include <algorithm>

namespace sluice::media::hls {

Segment clone(const Segment& s) {
  Segment c;
  c.msn = s.msn;
  c.start = s.start;
  c.duration = s.duration;
  c.pdt_ms = s.pdt_ms;
  c.discontinuity = s.discontinuity;
  c.complete = s.complete;
  c.init_id = s.init_id;
  c.bytes = s.bytes;
  c.parts.reserve(s.parts.size());
  for (const Part& p : s.parts) c.parts.push_back({p.bytes.share(), p.start, p.duration, p.independent});
  return c;
}

namespace {

constexpr uint32_t kTicksPerMs = kClock / 1000;
// A follower that never meets the driving track (a video track announced but silent) must not
// grow without bound: past this many waiting samples the oldest go.
constexpr size_t kMaxQueued = 4096;

bool same_setup(const StreamSetup& a, const StreamSetup& b) {
  return a.video.codec == b.video.codec && a.video.config == b.video.config && a.audio.codec == b.audio.codec &&
         a.audio.config == b.audio.config;
}

}  // namespace

Segmenter::Segmenter(Options options) : options_(options) {
  if (options_.segment_ms == 0) options_.segment_ms = 2000;
  if (options_.window == 0) options_.window = 1;
  target_s_ = std::max<uint32_t>(1, (options_.segment_ms + 999) / 1000);
}

Segmenter::~Segmenter() = default;

bool Segmenter::has_content() const {
  return started_ || holding_[0] || holding_[1] || !queue_[0].empty() || !queue_[1].empty();
}

void Segmenter::set_setup(const StreamSetup& setup) {
  if (writer_ && same_setup(setup, setup_)) return;
  if (has_content()) {
    finish();
    discontinuity_next_ = true;
  }
  setup_ = setup;
  writer_ = std::make_unique<PartWriter>(options_.container, setup_);
  ++init_id_;
  if (options_.container == Container::Fmp4) inits_.push_back({init_id_, Slice::adopt(writer_->init())});
  trim();
}

void Segmenter::mark_discontinuity() {
  if (has_content()) finish();
  wall_offset_ms_ = kNoWallOffset;  // the new publication has its own clock
  if (!any_output_) return;
  discontinuity_next_ = true;
  rebase_pending_ = true;
}

uint32_t Segmenter::default_duration(int track) const {
  if (last_duration_[track] != 0) return last_duration_[track];
  if (track == 1 && setup_.audio.sample_rate != 0) return uint32_t(uint64_t(1024) * kClock / setup_.audio.sample_rate);
  return 40 * kTicksPerMs;
}

void Segmenter::push(const Sample& sample, Slice keep, int64_t now_ms) {
  const int t = sample.video ? 0 : 1;
  if (!writer_ || !has_track(t)) return;
  now_ms_ = now_ms;
  if (rebase_pending_) {
    offset_ = int64_t(last_end_) - int64_t(sample.dts);
    rebase_pending_ = false;
  }
  Pending p{sample, std::move(keep)};
  const int64_t dts = int64_t(sample.dts) + offset_;
  p.s.dts = dts < 0 ? 0 : uint64_t(dts);
  wall_offset_ms_ = std::min(wall_offset_ms_, now_ms - int64_t(p.s.dts / kTicksPerMs));
  if (holding_[t]) {
    Pending prev = std::move(held_[t]);
    prev.s.duration = p.s.dts > prev.s.dts ? uint32_t(std::min<uint64_t>(p.s.dts - prev.s.dts, UINT32_MAX)) : 0;
    if (prev.s.duration != 0) last_duration_[t] = prev.s.duration;
    held_[t] = std::move(p);
    complete(t, std::move(prev));
  } else {
    held_[t] = std::move(p);
    holding_[t] = true;
  }
  emit_ready(false);
}

void Segmenter::complete(int track, Pending p) {
  if (track == driver()) return drive(std::move(p));
  if (!started_) return;  // before the first keyframe
  queue_[track].push_back(std::move(p));
  if (queue_[track].size() > kMaxQueued) queue_[track].pop_front();
}

void Segmenter::drive(Pending p) {
  const Sample& s = p.s;
  driver_dts_ = s.dts;
  if (!started_) {
    if (has_video() && !s.keyframe) return;
    started_ = true;
    part_start_ = last_cut_ = open_segment_start_ = s.dts;
    part_independent_ = true;
    open_segment(s.dts, std::exchange(discontinuity_next_, false));
    queue_[driver()].push_back(std::move(p));
    return;
  }
  const uint64_t segment_ticks = uint64_t(options_.segment_ms) * kTicksPerMs;
  const bool may_start_segment = !has_video() || s.keyframe;
  if (s.dts > last_cut_ && may_start_segment && s.dts - open_segment_start_ >= segment_ticks) {
    cuts_.push_back({s.dts, true});
    last_cut_ = open_segment_start_ = s.dts;
  } else if (options_.part_ms != 0 && s.dts > last_cut_ &&
             s.dts + s.duration - last_cut_ > uint64_t(options_.part_ms) * kTicksPerMs) {
    cuts_.push_back({s.dts, false});
    last_cut_ = s.dts;
  }
  queue_[driver()].push_back(std::move(p));
  if (queue_[driver()].size() > kMaxQueued) queue_[driver()].pop_front();
}

void Segmenter::emit_ready(bool force) {
  const int follower = 1 - driver();
  const uint64_t wait = uint64_t(options_.follower_wait_ms) * kTicksPerMs;
  while (!cuts_.empty()) {
    const Cut cut = cuts_.front();
    const bool ready = force || !has_track(follower) || (holding_[follower] && held_[follower].s.dts >= cut.at) ||
                       driver_dts_ >= cut.at + wait;
    if (!ready) return;
    cuts_.pop_front();
    emit_part(cut);
  }
}

void Segmenter::emit_part(const Cut& cut) {
  std::vector<Sample> tracks[2];
  for (int t = 0; t < 2; ++t) {
    for (const Pending& p : queue_[t]) {
      if (p.s.dts >= cut.at) break;
      tracks[t].push_back(p.s);
    }
  }
  if (segments_.empty() || segments_.back().complete) open_segment(part_start_, false);
  Segment& seg = segments_.back();
  seg.pdt_ms = wall_ms_at(seg.start);  // the offset may have shrunk since it opened (a GOP replay)
  const bool starts_segment = seg.parts.empty();
  std::vector<uint8_t> bytes = writer_->part(tracks[0], tracks[1], starts_segment);
  for (int t = 0; t < 2; ++t) queue_[t].erase(queue_[t].begin(), queue_[t].begin() + ptrdiff_t(tracks[t].size()));

  Part part;
  part.start = part_start_;
  part.duration = uint32_t(std::min<uint64_t>(cut.at - part_start_, UINT32_MAX));
  part.independent = part_independent_;
  part.bytes = Slice::adopt(std::move(bytes));
  seg.bytes += part.bytes.size();
  bytes_held_ += part.bytes.size();
  seg.duration = cut.at - seg.start;
  longest_part_ = std::max(longest_part_, part.duration);
  seg.parts.push_back(std::move(part));
  part_start_ = last_end_ = cut.at;
  any_output_ = true;
  const std::deque<Pending>& next = queue_[driver()];
  part_independent_ = !has_video() || (!next.empty() && next.front().s.dts == cut.at && next.front().s.keyframe);
  if (cut.ends_segment) {
    seg.complete = true;
    target_s_ = std::max<uint32_t>(target_s_, uint32_t((seg.duration + kClock - 1) / kClock));
    part_independent_ = true;
    open_segment(cut.at, false);
  }
  ++version_;
  trim();
}

void Segmenter::open_segment(uint64_t start, bool discontinuity) {
  if (!segments_.empty() && !segments_.back().complete && segments_.back().parts.empty()) segments_.pop_back();
  Segment s;
  s.msn = next_msn_++;
  s.start = start;
  s.pdt_ms = wall_ms_at(start);
  s.discontinuity = discontinuity;
  s.init_id = init_id_;
  segments_.push_back(std::move(s));
}

int64_t Segmenter::wall_ms_at(uint64_t dts) const {
  if (wall_offset_ms_ == kNoWallOffset) return now_ms_;
  return wall_offset_ms_ + int64_t(dts / kTicksPerMs);
}

void Segmenter::finish() {
  uint64_t end = part_start_;
  for (int t = 0; t < 2; ++t) {
    if (!holding_[t]) continue;
    holding_[t] = false;
    Pending p = std::move(held_[t]);
    p.s.duration = default_duration(t);
    complete(t, std::move(p));
  }
  if (started_) {
    for (int t = 0; t < 2; ++t) {
      for (const Pending& p : queue_[t]) end = std::max(end, p.s.dts + p.s.duration);
    }
    // The last part ends where the later track ends. When the other track's last frame takes it
    // past the part target, it is cut once more at the last driving sample (rule 2), so that part
    // holds that sample and what overhangs it.
    const std::deque<Pending>& driving = queue_[driver()];
    const uint64_t part_ticks = uint64_t(options_.part_ms) * kTicksPerMs;
    if (part_ticks != 0 && end > last_cut_ && end - last_cut_ > part_ticks && !driving.empty() &&
        driving.back().s.dts > last_cut_) {
      cuts_.push_back({driving.back().s.dts, false});
      last_cut_ = driving.back().s.dts;
    }
    if (end > last_cut_)
      cuts_.push_back({end, true});
    else if (!cuts_.empty())
      cuts_.back().ends_segment = true;
    emit_ready(true);
  }
  for (auto& q : queue_) q.clear();
  cuts_.clear();
  started_ = false;
  // The segment opened after the last cut has nothing in it: no reader must wait for it.
  if (!segments_.empty() && !segments_.back().complete && segments_.back().parts.empty()) {
    segments_.pop_back();
    --next_msn_;
  }
  if (!segments_.empty() && !segments_.back().complete) {
    Segment& seg = segments_.back();
    seg.complete = true;
    target_s_ = std::max<uint32_t>(target_s_, uint32_t((seg.duration + kClock - 1) / kClock));
  }
  ++version_;
}

void Segmenter::trim() {
  size_t complete = 0;
  for (const Segment& s : segments_) complete += s.complete ? 1 : 0;
  while (complete > size_t(options_.window) + 1) {
    const Segment& front = segments_.front();
    if (front.discontinuity) ++discontinuity_sequence_;
    bytes_held_ -= front.bytes;
    segments_.pop_front();
    --complete;
  }
  // Initialization segments nobody needs any more (the current one always stays).
  const uint32_t oldest = segments_.empty() ? init_id_ : segments_.front().init_id;
  std::erase_if(inits_, [&](const InitSegment& i) { return i.id < oldest && i.id != init_id_; });
}

}  // namespace sluice::media::hls
