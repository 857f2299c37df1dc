#include "bench/load/hls_client.hpp"

#include <algorithm>
#include <array>
#include <ctime>
#include <span>
#include <utility>

#include "bench/load/clock.hpp"
#include "bench/load/latency_tracker.hpp"
#include "bench/load/media_time.hpp"

namespace sluice::bench {

namespace {

constexpr unsigned kStatusOk = 200;
constexpr unsigned kStatusNotFound = 404;
constexpr unsigned kStatusUnavailable = 503;
constexpr uint8_t kAudio = 8;
constexpr uint8_t kVideo = 9;
constexpr size_t kPlaylistKeep = 1 << 20;  // a playlist is kept whole
constexpr size_t kMediaKeep = 16 * 1024;   // the moof (or the first PES headers) is in there
// A reader that gets nothing but errors this many times in a row gives up.
constexpr uint32_t kMaxConsecutiveErrors = 20;
constexpr uint64_t kRetryMs = 200;
constexpr uint64_t kNotLiveRetryMs = 500;
// A request unanswered for this long (a blocking reload is held at most three target durations).
constexpr int64_t kMinTimeoutNs = 10 * kNsPerSec;
// Guards step() against a playlist that never lets it settle.
constexpr int kMaxStepRounds = 8;

bool g_any_low_latency = false;

int64_t wall_ms() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t{ts.tv_sec} * 1000 + ts.tv_nsec / 1'000'000;
}

bool is_ts(const std::string& uri) {
  const std::string path = uri.substr(0, uri.find('?'));
  return path.size() >= 3 && path.compare(path.size() - 3, 3, ".ts") == 0;
}

}  // namespace

HlsClient::HlsClient(uv_loop_t* loop, const HttpUrl& url, const BenchOptions& options, ClientStats identity,
                     const LatencyTracker* tracker, HlsLatency* latency)
    : url_(url),
      options_(options),
      tracker_(tracker),
      latency_(latency),
      http_(loop, url.addr, url.host_header, *this),
      monitor_(options.stall_ms),
      stats_(std::move(identity)) {
  stats_.role = ClientRole::Player;
  uv_timer_init(loop, &timer_);
  timer_.data = this;
}

bool HlsClient::any_low_latency() { return g_any_low_latency; }

void HlsClient::start() {
  stats_.started_ns = now_ns();
  started_ = true;
  reload(false);
}

void HlsClient::reload(bool blocking) {
  want_ = Want::Playlist;
  std::string target = url_.path;
  if (blocking) {
    target += target.find('?') == std::string::npos ? '?' : '&';
    target += "_HLS_msn=" + std::to_string(next_.msn) + "&_HLS_part=" + std::to_string(next_.part);
    if (playlist_.can_skip && !options_.hls_no_skip) target += "&_HLS_skip=YES";
  }
  last_reload_ns_ = now_ns();
  http_.get(target, kPlaylistKeep);
}

void HlsClient::on_response(HttpResponse& r) {
  if (done_) return;
  if (stats_.setup_ns < 0) {
    stats_.setup_ns = r.sent_ns - stats_.started_ns;
    monitor_.on_play_sent(r.sent_ns);
  }
  switch (want_) {
    case Want::Playlist: on_playlist(r); break;
    case Want::Init:
      if (r.status != kStatusOk) {
        error("init: HTTP " + std::to_string(r.status), kRetryMs);
        break;
      }
      consecutive_errors_ = 0;
      init_loaded_ = init_pending_;
      step();
      break;
    case Want::Media: on_media(r); break;
    case Want::Nothing: break;
  }
}

void HlsClient::on_http_error(const std::string& reason) {
  if (!done_) error(reason, kRetryMs);
}

void HlsClient::on_playlist(HttpResponse& r) {
  ++stats_.playlists;
  if (r.status == kStatusUnavailable && have_playlist_) {
    // A blocking reload held to its end: the part did not come in time (the publisher paused).
    error("playlist: HTTP 503 (blocking reload timed out)", 0);
    return;
  }
  if (r.status != kStatusOk) {
    error("playlist: HTTP " + std::to_string(r.status), kNotLiveRetryMs);
    return;
  }
  std::string why;
  auto parsed = parse_media_playlist(r.body, why);
  if (!parsed) {
    error("playlist: " + why, kRetryMs);
    return;
  }
  consecutive_errors_ = 0;
  playlist_ = std::move(*parsed);
  if (!have_playlist_) {
    have_playlist_ = true;
    low_latency_ = playlist_.low_latency() && playlist_.can_block_reload && !options_.hls_segments;
    g_any_low_latency = g_any_low_latency || low_latency_;
    // The end of this first listing: media from there on was made after the reader arrived.
    for (auto it = playlist_.segments.rbegin(); it != playlist_.segments.rend(); ++it) {
      if (low_latency_) {
        live_from_ = it->complete() ? Position{it->msn + 1, 0} : Position{it->msn, uint32_t(it->parts.size())};
        break;
      }
      if (it->complete()) {
        live_from_ = {it->msn + 1, 0};
        break;
      }
    }
  }
  if (!low_latency_) {
    uint64_t end = 0;
    for (const auto& s : playlist_.segments) end = s.complete() ? s.msn + 1 : end;
    reload_changed_ = end != last_end_msn_;
    last_end_msn_ = end;
  }
  if (!positioned_) jump_to_live_edge(false);
  step();
}

void HlsClient::jump_to_live_edge(bool behind) {
  const Position from = next_;
  Position to = live_from_;
  bool found = false;
  for (auto it = playlist_.segments.rbegin(); it != playlist_.segments.rend() && !found; ++it) {
    if (!low_latency_) {
      if (it->complete()) to = {it->msn, 0}, found = true;
      continue;
    }
    for (size_t i = it->parts.size(); i-- > 0;) {
      if (it->parts[i].independent) {
        to = {it->msn, uint32_t(i)};
        found = true;
        break;
      }
    }
  }
  if (!found) {
    // Nothing to start on yet: wait for what comes next.
    const PlaylistSegment* last = playlist_.segments.empty() ? nullptr : &playlist_.segments.back();
    if (last) to = last->complete() ? Position{last->msn + 1, 0} : Position{last->msn, uint32_t(last->parts.size())};
  }
  if (behind) {
    ++stats_.fell_behind;
    // What was jumped over, as far as the playlist lists it (a lower bound).
    for (const auto& s : playlist_.segments) {
      if (!low_latency_) {
        stats_.parts_skipped += Position{s.msn, 0} >= from && Position{s.msn, 0} < to;
        continue;
      }
      for (uint32_t i = 0; i < s.parts.size(); ++i)
        stats_.parts_skipped += Position{s.msn, i} >= from && Position{s.msn, i} < to;
    }
  }
  next_ = to;
  positioned_ = true;
}

void HlsClient::step() {
  if (done_) return;
  if (!(low_latency_ ? step_parts() : step_segments())) reload(low_latency_);
}

// Returns false when the playlist must be reloaded (blocking) to go on.
bool HlsClient::step_parts() {
  for (int round = 0; round < kMaxStepRounds; ++round) {
    const PlaylistSegment* seg = playlist_.find(next_.msn);
    if (!seg) {
      if (next_.msn >= playlist_.end_msn()) return false;
      jump_to_live_edge(true);  // gone from the playlist (or only in its skipped part)
      continue;
    }
    if (next_.part < seg->parts.size()) {
      fetch(seg->parts[next_.part].uri, *seg, next_.part);
      return true;
    }
    if (!seg->complete()) return false;
    if (seg->parts.empty()) {
      jump_to_live_edge(true);  // its parts are no longer listed
      continue;
    }
    next_ = {next_.msn + 1, 0};
  }
  return false;
}

bool HlsClient::step_segments() {
  for (int round = 0; round < kMaxStepRounds; ++round) {
    const PlaylistSegment* seg = playlist_.find(next_.msn);
    if (seg && seg->complete()) {
      fetch(seg->uri, *seg, 0);
      return true;
    }
    if (next_.msn < playlist_.media_sequence + playlist_.skipped) {
      jump_to_live_edge(true);
      continue;
    }
    break;
  }
  // RFC 8216 6.3.4: a target duration after the start of the last load when it changed, half of
  // one when it did not.
  const int64_t wait_ns = static_cast<int64_t>(playlist_.target_s * (reload_changed_ ? 1.0 : 0.5) * kNsPerSec);
  const int64_t due = last_reload_ns_ + wait_ns - now_ns();
  reload_changed_ = false;  // the next reload is compared with this one
  reload_on_timer_ = true;
  want_ = Want::Nothing;
  schedule(due > 0 ? static_cast<uint64_t>(due / kNsPerMs) : 0);
  return true;
}

void HlsClient::fetch(const std::string& uri, const PlaylistSegment& seg, uint32_t part_index) {
  if (!seg.map_uri.empty() && seg.map_uri != init_loaded_) {
    init_pending_ = seg.map_uri;
    want_ = Want::Init;
    http_.get(resolve_uri(url_.path, seg.map_uri), 0);
    return;
  }
  Fetch f;
  f.at = next_;
  f.live = next_ >= live_from_;
  f.ts = is_ts(uri);
  if (low_latency_) {
    const PlaylistPart& part = seg.parts[part_index];
    f.duration_s = part.duration_s;
    f.independent = part.independent;
    if (seg.pdt_ms >= 0) {
      double before_s = 0;
      for (uint32_t i = 0; i < part_index; ++i) before_s += seg.parts[i].duration_s;
      f.pdt_ms = seg.pdt_ms + static_cast<int64_t>(before_s * 1000 + 0.5);
    }
  } else {
    f.duration_s = seg.duration_s;
    f.independent = true;
    f.pdt_ms = seg.pdt_ms;
  }
  fetching_ = f;
  want_ = Want::Media;
  http_.get(resolve_uri(url_.path, uri), kMediaKeep);
}

void HlsClient::on_media(HttpResponse& r) {
  if (r.status == kStatusNotFound) {
    // Gone (or never made): start again from the live edge of a fresh playlist.
    ++stats_.http_errors;
    ++stats_.fell_behind;
    stats_.last_http_error = "media: HTTP 404";
    positioned_ = false;
    reload(false);
    return;
  }
  if (r.status != kStatusOk) {
    error("media: HTTP " + std::to_string(r.status), kRetryMs);
    return;
  }
  consecutive_errors_ = 0;
  const auto bytes = std::span(reinterpret_cast<const uint8_t*>(r.body.data()), r.body.size());
  const auto start = fetching_.ts ? ts_media_start(bytes) : fmp4_media_start(bytes);
  const auto duration_ms = static_cast<int64_t>(fetching_.duration_s * 1000 + 0.5);
  const int64_t begin_ms = start ? int64_t{start->ms()} : std::max<int64_t>(media_clock_ms_, 0);
  media_clock_ms_ = begin_ms + duration_ms;
  // The part stands for one picture at its end time to the monitor (TTFF, keyframe first,
  // stalls). The first one also gives its start, where playback begins: a player has the whole
  // first part (a whole segment in segment mode) in hand when it starts.
  const std::array<uint8_t, 2> picture = {uint8_t(fetching_.independent ? 0x17 : 0x27), 0x01};
  if (stats_.ttff_ns < 0) {
    monitor_.on_media(kVideo, static_cast<uint32_t>(begin_ms), picture, r.done_ns, stats_);
    --stats_.messages_in;  // one part, one message
  }
  monitor_.on_media(kVideo, static_cast<uint32_t>(media_clock_ms_), picture, r.done_ns, stats_);
  stats_.ok = !stats_.failed;
  if (fetching_.live && latency_) {
    int64_t sent_ns = 0;
    if (tracker_ && start && tracker_->sent_at(start->video ? kVideo : kAudio, start->ms(), sent_ns)) {
      latency_->publish_ms.push_back(static_cast<float>(static_cast<double>(r.done_ns - sent_ns) / kNsPerMs));
    } else if (tracker_) {
      ++latency_->unmatched;
    }
    if (fetching_.pdt_ms >= 0) latency_->pdt_ms.push_back(static_cast<float>(wall_ms() - fetching_.pdt_ms));
  }
  if (low_latency_) {
    ++next_.part;
  } else {
    ++next_.msn;
  }
  step();
}

void HlsClient::error(const std::string& reason, uint64_t retry_ms) {
  ++stats_.http_errors;
  last_error_ = reason;
  stats_.last_http_error = reason;
  if (++consecutive_errors_ > kMaxConsecutiveErrors) {
    fail(std::to_string(kMaxConsecutiveErrors) + " errors in a row, the last: " + reason);
    return;
  }
  want_ = Want::Nothing;
  reload_on_timer_ = !have_playlist_;
  schedule(retry_ms);
}

void HlsClient::schedule(uint64_t ms) { uv_timer_start(&timer_, on_timer, ms, 0); }

void HlsClient::on_timer(uv_timer_t* timer) noexcept {
  auto* self = static_cast<HlsClient*>(timer->data);
  if (self->done_ || self->http_.busy()) return;
  const bool ok = guarded("hls timer", [&] {
    if (std::exchange(self->reload_on_timer_, false)) {
      self->reload(false);
    } else {
      self->step();
    }
  });
  if (!ok) self->fail("internal error in the HLS reader");
}

void HlsClient::tick(int64_t now) {
  if (done_ || !started_) return;
  if (stats_.ok) monitor_.check(now, stats_);
  const int64_t timeout = std::max(kMinTimeoutNs, static_cast<int64_t>(4 * playlist_.target_s * kNsPerSec));
  if (http_.request_age_ns(now) > timeout) {
    const char* what = want_ == Want::Playlist ? (positioned_ ? "blocking playlist reload" : "playlist")
                       : want_ == Want::Init   ? "init segment"
                                               : "part";
    http_.close();
    error(std::string(what) + " request unanswered for " + std::to_string(timeout / kNsPerSec) + " s", 0);
  }
}

void HlsClient::fail(const std::string& reason) {
  if (!stopping_) mark_failed(stats_, reason);
  if (stats_.failed) stats_.ok = false;
  done_ = true;
  uv_timer_stop(&timer_);
  http_.close();
}

void HlsClient::stop() {
  stopping_ = true;
  if (!started_) {
    mark_failed(stats_, "not started before the end (ramp-up too slow for the duration)");
  } else if (!stats_.ok && !stats_.failed) {
    mark_failed(stats_, "no media before the end" +
                            (last_error_.empty() ? std::string() : " (last error: " + last_error_ + ")"));
  }
  done_ = true;
  http_.close();
  uv_timer_stop(&timer_);
  uv_close(reinterpret_cast<uv_handle_t*>(&timer_), nullptr);
}

const ClientStats& HlsClient::stats() {
  stats_.bytes_in = http_.bytes_in();
  stats_.bytes_out = http_.bytes_out();
  stats_.connects = http_.connects();
  return stats_;
}

}  // namespace sluice::bench
