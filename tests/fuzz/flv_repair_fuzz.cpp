// libFuzzer target for recording repair (media/record): arbitrary bytes as a `.part` file.
// Properties: no crash or sanitizer report; scanning in chunks of 1 byte and of sizes drawn from
// the input's hash gives the same summary as scanning it whole; the summary stays inside the
// input; and when a finalize plan exists, its result rescans fully valid (valid_bytes == size), has
// the .part's tags minus its old onMetaData plus the new one, and an onMetaData whose filesize and
// keyframes.filepositions match the rescan. Seeds: corpus/flv_repair/, made by
// flv_repair_seeds.py.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <vector>

#include "media/record/finalize_plan.hpp"
#include "media/record/recording_scanner.hpp"
#include "protocol/amf0.hpp"

using namespace sluice;
using namespace sluice::media::record;
namespace amf = sluice::protocol::amf;

namespace {

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "flv repair: %s\n", what);
  std::abort();
}

bool same(const RecordingSummary& a, const RecordingSummary& b) {
  if (a.flv_header_ok != b.flv_header_ok || a.tags_offset != b.tags_offset || a.valid_bytes != b.valid_bytes ||
      a.torn_bytes != b.torn_bytes || a.tag_count != b.tag_count || a.keyframe_stride != b.keyframe_stride ||
      a.has_audio != b.has_audio || a.has_video != b.has_video || a.first_timestamp_ms != b.first_timestamp_ms ||
      a.last_timestamp_ms != b.last_timestamp_ms || a.stop_reason != b.stop_reason ||
      a.metadata.has_value() != b.metadata.has_value() || a.keyframes.size() != b.keyframes.size()) {
    return false;
  }
  if (a.metadata && (a.metadata->tag.offset != b.metadata->tag.offset || a.metadata->tag.size != b.metadata->tag.size ||
                     a.metadata->payload != b.metadata->payload)) {
    return false;
  }
  for (size_t i = 0; i < a.keyframes.size(); ++i) {
    if (a.keyframes[i].tag_offset != b.keyframes[i].tag_offset ||
        a.keyframes[i].timestamp_ms != b.keyframes[i].timestamp_ms) {
      return false;
    }
  }
  return true;
}

// Chunk sizes 1..64 from a simple generator seeded by the input (deterministic per input).
RecordingSummary scan_in_chunks(std::span<const uint8_t> file, bool single_bytes) {
  uint64_t state = 0x9E3779B97F4A7C15ull ^ file.size();
  for (size_t i = 0; i < file.size() && i < 64; ++i) state = state * 31 + file[i];
  RecordingScanner scanner;
  for (size_t at = 0; at < file.size();) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const size_t n = single_bytes ? 1 : std::min<size_t>(1 + (state >> 58), file.size() - at);
    scanner.feed(file.subspan(at, n));
    at += n;
  }
  return scanner.finish();
}

void check_inside(const RecordingSummary& s, size_t size) {
  if (s.valid_bytes > size || s.torn_bytes != size - s.valid_bytes) fail("valid prefix outside the input");
  if (s.flv_header_ok != (s.valid_bytes > 0)) fail("valid bytes without a header");
  // An empty input has no valid bytes and none torn, yet is "not an FLV file".
  if (s.torn_bytes > 0 && s.stop_reason.empty()) fail("torn bytes without a stop reason");
  if (s.flv_header_ok && s.torn_bytes == 0 && !s.stop_reason.empty()) fail("a stop reason for a valid file");
  if (s.metadata && (s.metadata->tag.offset < s.tags_offset || s.metadata->tag.end() > s.valid_bytes)) {
    fail("metadata tag outside the valid prefix");
  }
  for (size_t i = 0; i < s.keyframes.size(); ++i) {
    const KeyframeRef& k = s.keyframes[i];
    if (k.tag_offset < s.tags_offset || k.tag_offset >= s.valid_bytes) fail("keyframe outside the valid prefix");
    if (i > 0 && (k.tag_offset <= s.keyframes[i - 1].tag_offset || k.timestamp_ms < s.keyframes[i - 1].timestamp_ms)) {
      fail("keyframes out of order");
    }
  }
}

void check_final(const RecordingSummary& part, const FinalizePlan& plan, std::span<const uint8_t> file) {
  const std::vector<uint8_t> final_file = apply_finalize_plan(plan, file);
  if (final_file.size() != plan.final_size) fail("final size");
  const RecordingSummary s = scan_recording(final_file);
  if (!s.flv_header_ok || s.valid_bytes != final_file.size() || !s.stop_reason.empty()) fail("final file not valid");
  if (s.tag_count != plan.tag_count || plan.tag_count != part.tag_count - (part.metadata ? 1 : 0) + 1)
    fail("tag count");
  if (!s.metadata || s.metadata->tag.offset != s.tags_offset || s.metadata->tag.end() != plan.head.size()) {
    fail("new onMetaData is not the first tag");
  }
  if (s.has_audio != part.has_audio || s.has_video != part.has_video || s.last_timestamp_ms != part.last_timestamp_ms ||
      s.keyframes.size() != part.keyframes.size()) {
    fail("final file differs from the .part");
  }
  if (!same(s, scan_in_chunks(final_file, false))) fail("chunked rescan of the final file differs");

  auto values = amf::decode_amf0_all(s.metadata->payload);
  if (!values || values->size() != 2) fail("new onMetaData does not decode");
  const amf::Value& m = (*values)[1];
  if (m.get_number("filesize", -1) != static_cast<double>(final_file.size())) fail("filesize");
  const amf::Value* keyframes = m.find("keyframes");
  const amf::Value* positions = keyframes ? keyframes->find("filepositions") : nullptr;
  if (!positions || positions->items().size() != s.keyframes.size()) fail("keyframe index size");
  for (size_t i = 0; i < s.keyframes.size(); ++i) {
    if (positions->items()[i].as_number(-1) != static_cast<double>(s.keyframes[i].tag_offset)) fail("fileposition");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> file(data, size);
  const RecordingSummary whole = scan_recording(file);
  check_inside(whole, size);
  if (!same(whole, scan_in_chunks(file, false))) fail("chunked scan differs");
  if (size <= 4096 && !same(whole, scan_in_chunks(file, true))) fail("byte-by-byte scan differs");

  auto plan = plan_finalize(whole);
  if (!plan) {
    if (whole.flv_header_ok && (whole.has_audio || whole.has_video)) fail("no plan for a playable recording");
    return 0;
  }
  check_final(whole, *plan, file);
  return 0;
}
