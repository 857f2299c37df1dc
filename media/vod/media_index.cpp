#include "media/vod/media_index.hpp"

#include <algorithm>

namespace sluice::media::vod {

Result<std::span<const uint8_t>> ReadPlan::sample_bytes(std::span<const uint8_t> buffer, const Sample& s) const {
  // A zero-length sample (an FLV "audio silence" tag) has no bytes to find.
  if (s.size == 0) return std::span<const uint8_t>{};
  if (s.file_offset < bytes.offset) return Error(Errc::Malformed, "sample lies before the planned read");
  const uint64_t rel = s.file_offset - bytes.offset;
  if (rel > buffer.size() || buffer.size() - rel < s.size) {
    return Error(Errc::Truncated, "sample at offset " + std::to_string(s.file_offset) + " is past the bytes read");
  }
  return buffer.subspan(static_cast<size_t>(rel), s.size);
}

uint32_t MediaIndex::seek(uint32_t ms) const {
  if (samples.empty()) return 0;
  if (!keyframes.empty()) {
    auto it = std::upper_bound(keyframes.begin(), keyframes.end(), ms,
                               [](uint32_t t, const Keyframe& k) { return t < k.time_ms; });
    return it == keyframes.begin() ? keyframes.front().sample : std::prev(it)->sample;
  }
  // No video keyframes (audio only): the sample before the first one later than `ms`. A linear
  // scan, because FLV tags in file order need not be sorted by time; this is a rare path
  // (audio-only files) and a 2-hour AAC file has 300k samples.
  auto it = std::find_if(samples.begin(), samples.end(), [ms](const Sample& s) { return s.dts_ms > ms; });
  return it == samples.begin() ? 0 : static_cast<uint32_t>(std::prev(it) - samples.begin());
}

std::optional<uint32_t> MediaIndex::last_sequence_header(uint32_t before, uint8_t type) const {
  // The list is short (one entry per mid-stream configuration change): walk back from the
  // first entry at or after `before`.
  auto it = std::lower_bound(sequence_header_samples.begin(), sequence_header_samples.end(), before);
  while (it != sequence_header_samples.begin()) {
    --it;
    if (*it < samples.size() && samples[*it].type == type) return *it;
  }
  return std::nullopt;
}

ReadPlan MediaIndex::plan_read(uint32_t first, uint32_t end, uint64_t max_bytes) const {
  ReadPlan plan;
  end = std::min<uint32_t>(end, static_cast<uint32_t>(samples.size()));
  plan.first = plan.end = std::min(first, end);
  uint64_t lo = 0;
  uint64_t hi = 0;
  bool have_bytes = false;
  for (uint32_t i = plan.first; i < end; ++i) {
    const Sample& s = samples[i];
    if (s.size > 0) {
      const uint64_t new_lo = have_bytes ? std::min(lo, s.file_offset) : s.file_offset;
      const uint64_t new_hi = have_bytes ? std::max(hi, s.file_offset + s.size) : s.file_offset + s.size;
      if (have_bytes && new_hi - new_lo > max_bytes) break;
      lo = new_lo;
      hi = new_hi;
      have_bytes = true;
    }
    plan.end = i + 1;
  }
  plan.bytes = {lo, hi - lo};
  return plan;
}

size_t MediaIndex::memory_bytes() const {
  return samples.capacity() * sizeof(Sample) + keyframes.capacity() * sizeof(Keyframe) +
         sequence_header_samples.capacity() * sizeof(uint32_t) + video_sequence_header.capacity() +
         audio_sequence_header.capacity() + metadata.capacity();
}

}  // namespace sluice::media::vod
