// Turning a scanned recording (`NAME.flv.part`) into the final `NAME.flv`: the same routine at the
// end of a recording and when a .part is found after a crash (docs/recording.md, "Recording
// files"). Sans-I/O: the plan says which bytes to write; the caller writes them.
//
// Applying a plan:
//  1. Write `head` to a new file: the FLV header (audio/video flags from the tags actually
//     recorded), PreviousTagSize0 and the new onMetaData tag (timestamp 0) with its PreviousTagSize.
//  2. Append the .part's bytes of each `copy` range, in order: every valid tag except the old
//     onMetaData, byte for byte. A torn tail is left out.
//  3. The file is then `final_size` bytes. Sync it before removing the .part: until then a crash
//     must find the .part, to finalize it again.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "media/record/recording_scanner.hpp"
#include "base/result.hpp"

namespace sluice::media::record {

struct FinalizePlan {
  std::vector<uint8_t> head;
  std::vector<ByteRange> copy;  // ranges of the .part, ascending, none empty
  uint64_t final_size = 0;      // head.size() + the sizes of the copy ranges
  uint32_t duration_ms = 0;     // the largest audio/video timestamp
  uint64_t tag_count = 0;       // tags of the final file, the new onMetaData included
};

// Errc::Malformed when nothing playable is left: no valid FLV header, or no complete audio or
// video tag. The caller then keeps the .part aside instead of finalizing it.
Result<FinalizePlan> plan_finalize(const RecordingSummary& summary);

// Step 1 and 2 in memory, for tests, tools and fuzzing. `part` must hold at least the bytes the
// summary was made from.
std::vector<uint8_t> apply_finalize_plan(const FinalizePlan& plan, std::span<const uint8_t> part);

}  // namespace sluice::media::record
