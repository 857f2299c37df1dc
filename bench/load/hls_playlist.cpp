#include "bench/load/hls_playlist.hpp"

#include <charconv>
#include <cstdlib>
#include <ctime>

namespace sluice::bench {

namespace {

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

std::optional<double> to_double(std::string_view s) {
  if (s.empty()) return std::nullopt;
  const std::string copy(s);
  char* end = nullptr;
  const double v = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size()) return std::nullopt;
  return v;
}

std::optional<uint64_t> to_u64(std::string_view s) {
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

// The value of NAME in an attribute list (NAME=VALUE,NAME="VALUE",...), quotes removed; nullopt
// when absent.
std::optional<std::string_view> attribute(std::string_view list, std::string_view name) {
  size_t i = 0;
  while (i < list.size()) {
    const size_t eq = list.find('=', i);
    if (eq == std::string_view::npos) return std::nullopt;
    const std::string_view key = list.substr(i, eq - i);
    size_t value_start = eq + 1, value_end = 0, next = 0;
    if (value_start < list.size() && list[value_start] == '"') {
      ++value_start;
      value_end = list.find('"', value_start);
      if (value_end == std::string_view::npos) return std::nullopt;
      next = list.find(',', value_end);
    } else {
      value_end = list.find(',', value_start);
      if (value_end == std::string_view::npos) value_end = list.size();
      next = value_end;
    }
    if (key == name) return list.substr(value_start, value_end - value_start);
    if (next == std::string_view::npos) return std::nullopt;
    i = next + 1;
  }
  return std::nullopt;
}

int digits(std::string_view s, size_t pos, size_t n) {
  int v = 0;
  if (pos + n > s.size()) return -1;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return -1;
    v = v * 10 + (s[i] - '0');
  }
  return v;
}

}  // namespace

const PlaylistSegment* MediaPlaylist::find(uint64_t msn) const {
  const uint64_t first = media_sequence + skipped;
  if (msn < first || msn - first >= segments.size()) return nullptr;
  return &segments[msn - first];
}

int64_t parse_iso8601_ms(std::string_view s) {
  // YYYY-MM-DDTHH:MM:SS[.fff](Z|+hh:mm|-hh:mm)
  const int y = digits(s, 0, 4), mo = digits(s, 5, 2), d = digits(s, 8, 2);
  const int h = digits(s, 11, 2), mi = digits(s, 14, 2), sec = digits(s, 17, 2);
  if (y < 0 || mo < 1 || d < 1 || h < 0 || mi < 0 || sec < 0) return -1;
  size_t pos = 19;
  int64_t ms = 0;
  if (pos < s.size() && s[pos] == '.') {
    int64_t scale = 100;
    for (++pos; pos < s.size() && s[pos] >= '0' && s[pos] <= '9'; ++pos) {
      ms += (s[pos] - '0') * scale;
      scale /= 10;
    }
  }
  int64_t offset_min = 0;
  if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    const int oh = digits(s, pos + 1, 2), om = digits(s, pos + 4, 2);
    if (oh < 0 || om < 0) return -1;
    offset_min = (s[pos] == '-' ? -1 : 1) * (oh * 60 + om);
  }
  // Days since the epoch from the civil date (H. Hinnant's algorithm).
  const int yy = mo <= 2 ? y - 1 : y;
  const int era = (yy >= 0 ? yy : yy - 399) / 400;
  const int yoe = yy - era * 400;
  const int doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  const int64_t days = int64_t{era} * 146097 + doe - 719468;
  return ((days * 24 + h) * 60 + mi - offset_min) * 60000 + int64_t{sec} * 1000 + ms;
}

namespace {

// What parse_media_playlist() has read so far.
struct PlaylistRead {
  MediaPlaylist pl;
  PlaylistSegment pending;  // the segment whose tags are being read
  std::string map_uri;
  double extinf = -1;

  // The segment's URI line ends it.
  void end_segment(std::string_view uri) {
    pending.uri = std::string(uri);
    pending.duration_s = extinf;
    add_pending();
    extinf = -1;
  }
  void add_pending() {
    pending.map_uri = map_uri;
    pending.msn = pl.media_sequence + pl.skipped + pl.segments.size();
    pl.segments.push_back(std::move(pending));
    pending = PlaylistSegment{};
  }
  // One tag line; false when its value is not what the tag needs. Unknown tags are skipped.
  bool tag(std::string_view tag, std::string_view value) {
    if (tag == "#EXTINF") {
      const auto v = to_double(value.substr(0, value.find(',')));
      extinf = v.value_or(0);
      return v.has_value();
    }
    if (tag == "#EXT-X-TARGETDURATION") {
      const auto v = to_double(value);
      pl.target_s = v.value_or(0);
      return v.has_value();
    }
    if (tag == "#EXT-X-MEDIA-SEQUENCE") {
      const auto v = to_u64(value);
      pl.media_sequence = v.value_or(0);
      return v.has_value();
    }
    if (tag == "#EXT-X-SKIP") {
      const auto v = to_u64(attribute(value, "SKIPPED-SEGMENTS").value_or(""));
      pl.skipped = v.value_or(0);
      return v.has_value();
    }
    if (tag == "#EXT-X-PART-INF") {
      const auto v = to_double(attribute(value, "PART-TARGET").value_or(""));
      pl.part_target_s = v.value_or(0);
      return v.has_value();
    }
    if (tag == "#EXT-X-PART") return part(value);
    if (tag == "#EXT-X-SERVER-CONTROL") {
      pl.can_block_reload = attribute(value, "CAN-BLOCK-RELOAD") == "YES";
      pl.can_skip = attribute(value, "CAN-SKIP-UNTIL").has_value();
      pl.part_hold_back_s = to_double(attribute(value, "PART-HOLD-BACK").value_or("")).value_or(0);
    } else if (tag == "#EXT-X-MAP") {
      map_uri = std::string(attribute(value, "URI").value_or(""));
    } else if (tag == "#EXT-X-PROGRAM-DATE-TIME") {
      pending.pdt_ms = parse_iso8601_ms(value);
    } else if (tag == "#EXT-X-PRELOAD-HINT") {
      if (attribute(value, "TYPE") == "PART") pl.preload_hint_uri = std::string(attribute(value, "URI").value_or(""));
    } else if (tag == "#EXT-X-ENDLIST") {
      pl.ended = true;
    }
    return true;
  }
  bool part(std::string_view value) {
    PlaylistPart part;
    part.uri = std::string(attribute(value, "URI").value_or(""));
    const auto d = to_double(attribute(value, "DURATION").value_or(""));
    part.duration_s = d.value_or(0);
    part.independent = attribute(value, "INDEPENDENT") == "YES";
    pending.parts.push_back(std::move(part));
    return d.has_value() && !pending.parts.back().uri.empty();
  }
};

}  // namespace

std::optional<MediaPlaylist> parse_media_playlist(std::string_view text, std::string& error) {
  PlaylistRead read;
  bool first_line = true;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (first_line) {
      if (line != "#EXTM3U") {
        error = "not a playlist (no #EXTM3U)";
        return std::nullopt;
      }
      first_line = false;
      continue;
    }
    if (line.empty()) continue;
    if (line.front() != '#') {
      if (read.extinf < 0) {
        error = "a URI without #EXTINF";
        return std::nullopt;
      }
      read.end_segment(line);
      continue;
    }
    const size_t colon = line.find(':');
    const std::string_view tag = line.substr(0, colon);
    if (!read.tag(tag, colon == std::string_view::npos ? std::string_view() : line.substr(colon + 1))) {
      error = "bad " + std::string(tag) + " line";
      return std::nullopt;
    }
  }
  if (first_line) {
    error = "empty playlist";
    return std::nullopt;
  }
  // Parts after the last URI belong to the segment being written.
  if (!read.pending.parts.empty()) read.add_pending();
  return std::move(read.pl);
}

std::string resolve_uri(std::string_view playlist_target, std::string_view uri) {
  if (starts_with(uri, "http://") || starts_with(uri, "https://")) {
    const size_t slash = uri.find('/', uri.find("//") + 2);
    return slash == std::string_view::npos ? std::string("/") : std::string(uri.substr(slash));
  }
  if (starts_with(uri, "/")) return std::string(uri);
  const std::string_view path = playlist_target.substr(0, playlist_target.find('?'));
  const size_t last = path.rfind('/');
  return std::string(path.substr(0, last == std::string_view::npos ? 0 : last + 1)) + std::string(uri);
}

}  // namespace sluice::bench
