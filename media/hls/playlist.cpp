#include "media/hls/playlist.hpp"

#include <charconv>
#include <cstdio>

namespace sluice::media::hls {

namespace {

std::string seconds(uint64_t ticks) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", double(ticks) / kClock);
  return buf;
}

const char* media_ext(Container c) { return c == Container::Fmp4 ? ".m4s" : ".ts"; }

std::string with_query(std::string uri, const std::string& query) {
  if (!query.empty()) uri += "?" + query;
  return uri;
}

void add_parts(std::string& out, const Segment& s, const PlaylistParams& p) {
  for (size_t i = 0; i < s.parts.size(); ++i) {
    const Part& part = s.parts[i];
    out += "#EXT-X-PART:DURATION=" + seconds(part.duration) + ",URI=\"" +
           with_query("part" + std::to_string(s.msn) + "." + std::to_string(i) + media_ext(p.container), p.query) +
           "\"";
    if (part.independent) out += ",INDEPENDENT=YES";
    out += "\n";
  }
}

bool parse_u64(std::string_view s, uint64_t& v) {
  if (s.empty() || s.size() > 19) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && end == s.data() + s.size();
}

}  // namespace

std::string iso8601_utc(int64_t ms) {
  int64_t days = ms >= 0 ? ms / 86400000 : (ms - 86399999) / 86400000;
  int64_t rest = ms - days * 86400000;
  // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
  int64_t z = days + 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int64_t d = doy - (153 * mp + 2) / 5 + 1;
  const int64_t m = mp < 10 ? mp + 3 : mp - 9;
  const int64_t y = yoe + era * 400 + (m <= 2 ? 1 : 0);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%04lld-%02lld-%02lldT%02lld:%02lld:%02lld.%03lldZ", (long long)y, (long long)m,
                (long long)d, (long long)(rest / 3600000), (long long)(rest / 60000 % 60),
                (long long)(rest / 1000 % 60), (long long)(rest % 1000));
  return buf;
}

std::string render_playlist(std::span<const Segment> segments, const PlaylistParams& p) {
  // The listed segments: the last `window` complete ones and the one being written.
  size_t complete = 0;
  for (const Segment& s : segments) complete += s.complete ? 1 : 0;
  size_t first = 0;
  uint64_t discontinuity_sequence = p.discontinuity_sequence;
  while (complete > p.window && first < segments.size()) {
    if (segments[first].complete) --complete;
    if (segments[first].discontinuity) ++discontinuity_sequence;
    ++first;
  }
  const std::span<const Segment> listed = segments.subspan(first);
  const bool ll = p.low_latency && p.part_ms != 0;
  const uint64_t target = uint64_t(p.target_s) * kClock;
  const uint64_t skip_until = 6 * target;

  uint64_t end = 0;
  for (const Segment& s : listed) end = std::max(end, s.start + s.duration);
  // Delta update: the segments that end more than skip_until before the end, up to the first
  // discontinuity or change of initialization segment.
  size_t skipped = 0;
  if (ll && p.skip) {
    while (skipped + 1 < listed.size()) {
      const Segment& s = listed[skipped];
      if (!s.complete || s.start + s.duration + skip_until > end) break;
      const Segment& next = listed[skipped + 1];
      if (next.discontinuity || next.init_id != s.init_id) break;
      ++skipped;
    }
  }

  std::string out = "#EXTM3U\n";
  const int version = ll ? 9 : p.container == Container::Fmp4 ? 7 : 3;
  out += "#EXT-X-VERSION:" + std::to_string(version) + "\n";
  out += "#EXT-X-TARGETDURATION:" + std::to_string(p.target_s) + "\n";
  if (ll) {
    out += "#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,CAN-SKIP-UNTIL=" + seconds(skip_until) +
           ",PART-HOLD-BACK=" + seconds(uint64_t(p.part_ms) * 3 * (kClock / 1000)) + "\n";
    out += "#EXT-X-PART-INF:PART-TARGET=" + seconds(uint64_t(p.part_ms) * (kClock / 1000)) + "\n";
  }
  out += "#EXT-X-MEDIA-SEQUENCE:" + std::to_string(listed.empty() ? 0 : listed.front().msn) + "\n";
  if (discontinuity_sequence != 0) {
    out += "#EXT-X-DISCONTINUITY-SEQUENCE:" + std::to_string(discontinuity_sequence) + "\n";
  }
  if (skipped != 0) out += "#EXT-X-SKIP:SKIPPED-SEGMENTS=" + std::to_string(skipped) + "\n";
  uint32_t map = 0;
  for (size_t i = skipped; i < listed.size(); ++i) {
    const Segment& s = listed[i];
    if (!s.complete && s.parts.empty()) break;
    if (s.discontinuity) out += "#EXT-X-DISCONTINUITY\n";
    if (p.container == Container::Fmp4 && s.init_id != map) {
      map = s.init_id;
      out += "#EXT-X-MAP:URI=\"" + with_query("init" + std::to_string(map) + ".mp4", p.query) + "\"\n";
    }
    out += "#EXT-X-PROGRAM-DATE-TIME:" + iso8601_utc(s.pdt_ms) + "\n";
    if (ll && (!s.complete || s.start + s.duration + 3 * target > end)) add_parts(out, s, p);
    if (s.complete) {
      out += "#EXTINF:" + seconds(s.duration) + ",\n";
      out += with_query("seg" + std::to_string(s.msn) + media_ext(p.container), p.query) + "\n";
    }
  }
  if (ll && !listed.empty()) {
    const Segment& last = listed.back();
    // The next part: of the segment being written, or the first of the next one.
    const uint64_t msn = last.complete ? last.msn + 1 : last.msn;
    const size_t index = last.complete ? 0 : last.parts.size();
    out += "#EXT-X-PRELOAD-HINT:TYPE=PART,URI=\"" +
           with_query("part" + std::to_string(msn) + "." + std::to_string(index) + media_ext(p.container), p.query) +
           "\"\n";
  }
  return out;
}

BlockAnswer block_answer(std::span<const Segment> segments, uint64_t msn, int64_t part, uint32_t part_ms) {
  if (segments.empty()) return msn > 2 ? BlockAnswer::BadRequest : BlockAnswer::Wait;
  const Segment& last = segments.back();
  if (msn < segments.front().msn) return BlockAnswer::Ready;
  if (msn > last.msn + 2) return BlockAnswer::BadRequest;
  if (part >= 0 && part_ms > 0) {
    const int64_t limit = part_ms < 1000 ? (3000 + part_ms - 1) / part_ms : 3;
    // Parts between the last one listed and the one asked for (at least).
    const int64_t ahead = msn == last.msn ? part - (int64_t(last.parts.size()) - 1) : part + 1;
    if (ahead > limit) return BlockAnswer::BadRequest;
  }
  if (msn > last.msn) return BlockAnswer::Wait;
  const Segment& s = segments[msn - segments.front().msn];
  if (s.complete) {
    if (part < 0 || size_t(part) < s.parts.size()) return BlockAnswer::Ready;
    // Past the end of a complete segment: the first part of the next one.
    if (msn == last.msn) return BlockAnswer::Wait;
    return segments[msn + 1 - segments.front().msn].parts.empty() ? BlockAnswer::Wait : BlockAnswer::Ready;
  }
  if (part >= 0 && size_t(part) < s.parts.size()) return BlockAnswer::Ready;
  return BlockAnswer::Wait;
}

bool parse_media_name(std::string_view file, Container container, MediaName& out) {
  const std::string_view ext = media_ext(container);
  if (file.starts_with("init") && file.ends_with(".mp4") && container == Container::Fmp4) {
    out.kind = MediaName::Kind::Init;
    return parse_u64(file.substr(4, file.size() - 8), out.msn);
  }
  if (!file.ends_with(ext)) return false;
  file.remove_suffix(ext.size());
  if (file.starts_with("seg")) {
    out.kind = MediaName::Kind::Segment;
    return parse_u64(file.substr(3), out.msn);
  }
  if (!file.starts_with("part")) return false;
  file.remove_prefix(4);
  const size_t dot = file.find('.');
  if (dot == std::string_view::npos) return false;
  uint64_t index = 0;
  if (!parse_u64(file.substr(0, dot), out.msn) || !parse_u64(file.substr(dot + 1), index) || index > 100000) {
    return false;
  }
  out.kind = MediaName::Kind::Part;
  out.part = uint32_t(index);
  return true;
}

}  // namespace sluice::media::hls
