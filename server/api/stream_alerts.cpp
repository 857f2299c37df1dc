#include "server/api/stream_alerts.hpp"

#include <algorithm>

namespace sluice::server {

namespace {

size_t index(AlertKind k) { return static_cast<size_t>(k); }
double seconds(uint64_t ms) { return static_cast<double>(ms) / 1000; }

}  // namespace

const char* alert_name(AlertKind k) {
  switch (k) {
    case AlertKind::NoMedia: return "no_media";
    case AlertKind::KeyframeInterval: return "keyframe_interval";
    case AlertKind::LowFps: return "fps_below";
    case AlertKind::LowBitrate: return "bitrate_below";
  }
  return "unknown";
}

const char* alert_unit(AlertKind k) {
  switch (k) {
    case AlertKind::NoMedia:
    case AlertKind::KeyframeInterval: return "s";
    case AlertKind::LowFps: return "fps";
    case AlertKind::LowBitrate: return "kbps";
  }
  return "";
}

bool StreamAlerts::Track::any_raised() const {
  return std::any_of(conditions.begin(), conditions.end(), [](const Condition& c) { return c.raised; });
}

void StreamAlerts::evaluate(const std::map<std::string, StreamObservation>& streams, const RulesFor& rules,
                            uint64_t now_ms, std::vector<AlertEvent>& out) {
  // A stream is followed from the first round that sees it live under an app with rules.
  for (const auto& [key, o] : streams) {
    if (!o.live || tracks_.contains(key)) continue;
    const config::StreamAlertRules* r = rules(key);
    if (r != nullptr && r->any()) tracks_.emplace(key, Track{});
  }
  for (auto it = tracks_.begin(); it != tracks_.end();) {
    const std::string& key = it->first;
    Track& t = it->second;
    const config::StreamAlertRules* r = rules(key);
    if (r == nullptr || !r->any()) {
      clear_all(key, t, "rule removed", out);
      it = tracks_.erase(it);
      continue;
    }
    const auto found = streams.find(key);
    const StreamObservation* o = found == streams.end() ? nullptr : &found->second;
    observe(key, t, *r, o, now_ms, out);
    // Nothing left to tell of a stream that ended: no alert raised, and none that its absence raises.
    if ((o == nullptr || !o->live) && !t.any_raised() && !r->no_media) {
      it = tracks_.erase(it);
      continue;
    }
    ++it;
  }
  bound(out);
}

void StreamAlerts::observe(const std::string& key, Track& t, const config::StreamAlertRules& rules,
                           const StreamObservation* o, uint64_t now_ms, std::vector<AlertEvent>& out) {
  const bool live = o != nullptr && o->live;
  t.live = live;
  if (live) {
    t.last_live_ms = now_ms;
    // Before its first frame a publisher counts as silent since it began.
    const uint64_t idle = std::min(o->idle_ms.value_or(o->live_for_ms), now_ms);
    t.last_media_ms = std::max(t.last_media_ms, now_ms - idle);
  }
  if (rules.no_media) {
    const uint64_t quiet = now_ms - t.last_media_ms;
    const auto limit = static_cast<uint64_t>(rules.no_media->count());
    step(key, t, AlertKind::NoMedia, quiet >= limit, seconds(quiet), seconds(limit), 0, now_ms, out);
  } else {
    clear(key, t, AlertKind::NoMedia, "rule removed", out);
  }

  const AlertKind content[] = {AlertKind::KeyframeInterval, AlertKind::LowFps, AlertKind::LowBitrate};
  if (!live) {
    // Stand still while nobody publishes (a reconnect, a takeover across loops), for a while.
    if (now_ms - t.last_live_ms < kPublisherGoneMs) return;
    for (AlertKind k : content) {
      t.conditions[index(k)].bad_since_ms.reset();
      clear(key, t, k, "publisher left", out);
    }
    return;
  }
  if (rules.keyframe_interval) {
    const auto limit = static_cast<uint64_t>(rules.keyframe_interval->count());
    const uint64_t worst = std::max<uint64_t>(o->keyframe_interval_ms, o->since_keyframe_ms.value_or(0));
    // Cleared by a measured interval, not by a new publisher's first keyframe (its GOP is unknown
    // until its second one: a publisher that lands on another loop starts the figures afresh).
    std::optional<bool> bad = o->video && worst > limit;
    if (!*bad && o->video && o->keyframe_interval_ms == 0) bad.reset();
    step(key, t, AlertKind::KeyframeInterval, bad, seconds(worst), seconds(limit), 0, now_ms, out);
  } else {
    clear(key, t, AlertKind::KeyframeInterval, "rule removed", out);
  }
  if (rules.fps_below) {
    std::optional<bool> bad;
    if (o->video && o->live_for_ms >= kFpsSettleMs) bad = o->fps < *rules.fps_below;
    step(key, t, AlertKind::LowFps, bad, o->fps, *rules.fps_below, static_cast<uint64_t>(rules.fps_for.count()), now_ms,
         out);
  } else {
    clear(key, t, AlertKind::LowFps, "rule removed", out);
  }
  if (rules.bitrate_below_kbps) {
    std::optional<bool> bad;
    const auto limit = static_cast<double>(*rules.bitrate_below_kbps);
    if (o->live_for_ms >= kBitrateSettleMs) bad = o->kbps < limit;
    step(key, t, AlertKind::LowBitrate, bad, o->kbps, limit, static_cast<uint64_t>(rules.bitrate_for.count()), now_ms,
         out);
  } else {
    clear(key, t, AlertKind::LowBitrate, "rule removed", out);
  }
}

void StreamAlerts::step(const std::string& key, Track& t, AlertKind kind, std::optional<bool> bad, double value,
                        double threshold, uint64_t hold_ms, uint64_t now_ms, std::vector<AlertEvent>& out) {
  Condition& c = t.conditions[index(kind)];
  c.value = value;
  c.threshold = threshold;
  if (!bad) return;
  if (!*bad) {
    c.bad_since_ms.reset();
    if (c.raised) {
      c.raised = false;
      out.push_back({key, kind, false, value, threshold, ""});
    }
    return;
  }
  if (!c.bad_since_ms) c.bad_since_ms = now_ms;
  if (c.raised || now_ms - *c.bad_since_ms < hold_ms) return;
  c.raised = true;
  c.raised_at_ms = now_ms;
  ++raised_total_[index(kind)];
  out.push_back({key, kind, true, value, threshold, ""});
}

void StreamAlerts::clear(const std::string& key, Track& t, AlertKind kind, const char* reason,
                         std::vector<AlertEvent>& out) {
  Condition& c = t.conditions[index(kind)];
  c.bad_since_ms.reset();
  if (!c.raised) return;
  c.raised = false;
  out.push_back({key, kind, false, c.value, c.threshold, reason});
}

void StreamAlerts::clear_all(const std::string& key, Track& t, const char* reason, std::vector<AlertEvent>& out) {
  for (size_t k = 0; k < kAlertKinds; ++k) clear(key, t, static_cast<AlertKind>(k), reason, out);
}

void StreamAlerts::bound(std::vector<AlertEvent>& out) {
  while (tracks_.size() > kMaxTracked) {
    // The stream silent the longest among those nobody publishes now.
    auto oldest = tracks_.end();
    for (auto it = tracks_.begin(); it != tracks_.end(); ++it) {
      if (it->second.live) continue;
      if (oldest == tracks_.end() || it->second.last_media_ms < oldest->second.last_media_ms) oldest = it;
    }
    if (oldest == tracks_.end()) return;
    clear_all(oldest->first, oldest->second, "no longer followed (more than 1000 streams)", out);
    tracks_.erase(oldest);
  }
}

std::vector<StreamAlerts::Active> StreamAlerts::active() const {
  std::vector<Active> list;
  for (const auto& [key, t] : tracks_) {
    for (size_t k = 0; k < kAlertKinds; ++k) {
      const Condition& c = t.conditions[k];
      if (c.raised) list.push_back({key, static_cast<AlertKind>(k), c.value, c.threshold, c.raised_at_ms});
    }
  }
  return list;
}

}  // namespace sluice::server
