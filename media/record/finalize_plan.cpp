#include "media/record/finalize_plan.hpp"

#include <cassert>

#include "media/flv/flv.hpp"
#include "media/record/final_metadata.hpp"
#include "media/sample.hpp"

namespace sluice::media::record {

namespace {

// The valid tags after the FLV header, minus the old onMetaData tag.
std::vector<ByteRange> copy_ranges(const RecordingSummary& s) {
  std::vector<ByteRange> ranges;
  auto add = [&](uint64_t from, uint64_t to) {
    if (to > from) ranges.push_back({from, to - from});
  };
  if (s.metadata) {
    add(s.tags_offset, s.metadata->tag.offset);
    add(s.metadata->tag.end(), s.valid_bytes);
  } else {
    add(s.tags_offset, s.valid_bytes);
  }
  return ranges;
}

// Where a tag of the .part lands among the copied bytes (0 = right after the head).
uint64_t copied_offset(const RecordingSummary& s, uint64_t part_offset) {
  uint64_t offset = part_offset - s.tags_offset;
  if (s.metadata && part_offset > s.metadata->tag.offset) offset -= s.metadata->tag.size;
  return offset;
}

}  // namespace

Result<FinalizePlan> plan_finalize(const RecordingSummary& summary) {
  if (!summary.flv_header_ok) return Error(Errc::Malformed, "recording has no FLV header: " + summary.stop_reason);
  if (!summary.has_audio && !summary.has_video) {
    return Error(Errc::Malformed, "recording has no complete audio or video tag");
  }
  FinalizePlan plan;
  plan.copy = copy_ranges(summary);
  uint64_t tags_size = 0;
  for (const ByteRange& r : plan.copy) tags_size += r.size;

  FinalMetadataFacts facts;
  facts.duration_ms = summary.last_timestamp_ms;  // timestamps start at the recording's start
  facts.last_timestamp_ms = summary.last_timestamp_ms;
  facts.has_audio = summary.has_audio;
  facts.has_video = summary.has_video;
  facts.tags_size = tags_size;
  facts.keyframes.reserve(summary.keyframes.size());
  for (const KeyframeRef& k : summary.keyframes)
    facts.keyframes.push_back({k.timestamp_ms, copied_offset(summary, k.tag_offset)});
  const auto original =
      summary.metadata ? std::span<const uint8_t>(summary.metadata->payload) : std::span<const uint8_t>();
  const std::vector<uint8_t> body = build_final_metadata(original, facts);

  write_flv_header(summary.has_audio, summary.has_video, plan.head);
  append_tag(kSampleScript, 0, body, plan.head);
  assert(plan.head.size() == kFinalHeadOverhead + body.size());
  plan.final_size = plan.head.size() + tags_size;
  plan.duration_ms = facts.duration_ms;
  plan.tag_count = summary.tag_count - (summary.metadata ? 1 : 0) + 1;
  return plan;
}

std::vector<uint8_t> apply_finalize_plan(const FinalizePlan& plan, std::span<const uint8_t> part) {
  std::vector<uint8_t> out(plan.head);
  out.reserve(plan.final_size);
  for (const ByteRange& r : plan.copy) {
    const auto bytes = part.subspan(r.offset, r.size);
    out.insert(out.end(), bytes.begin(), bytes.end());
  }
  return out;
}

}  // namespace sluice::media::record
