#include "server/snapshot/snapshot_params.hpp"

#include <algorithm>
#include <charconv>

namespace sluice::server {

namespace {

// A decimal in [lo, hi], or an error naming the parameter.
bool parse_bounded(const std::string& text, uint32_t lo, uint32_t hi, const char* name, uint32_t& out,
                   std::string& error) {
  uint32_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || v < lo || v > hi) {
    error = std::string(name) + " must be a whole number from " + std::to_string(lo) + " to " + std::to_string(hi);
    return false;
  }
  out = v;
  return true;
}

}  // namespace

SnapshotParamsParsed parse_snapshot_params(const std::optional<std::string>& width,
                                           const std::optional<std::string>& quality) {
  SnapshotParamsParsed r;
  if (width &&
      !parse_bounded(*width, SnapshotParams::kMinWidth, SnapshotParams::kMaxWidth, "width", r.params.width, r.error)) {
    return r;
  }
  if (quality) parse_bounded(*quality, 1, 100, "quality", r.params.quality, r.error);
  return r;
}

SnapshotSize snapshot_size(uint32_t source_width, uint32_t source_height, uint32_t asked) {
  SnapshotSize s{source_width, source_height};
  if (asked != 0 && asked < source_width && source_width > 0) {
    s.width = asked;
    s.height = static_cast<uint32_t>((static_cast<uint64_t>(source_height) * asked + source_width / 2) / source_width);
  }
  s.width = std::max<uint32_t>(2, s.width & ~1u);
  s.height = std::max<uint32_t>(2, s.height & ~1u);
  return s;
}

uint32_t mjpeg_qscale(uint32_t quality) {
  quality = std::clamp<uint32_t>(quality, 1, 100);
  const uint32_t percent = quality < 50 ? 5000 / quality : 200 - 2 * quality;
  // qscale = 8 * 1.7 * percent / 100, rounded.
  const uint32_t q = (percent * 136 + 500) / 1000;
  return std::clamp<uint32_t>(q, 1, 31);
}

}  // namespace sluice::server
