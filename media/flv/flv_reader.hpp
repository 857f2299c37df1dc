// FlvReader: the framing of an FLV file (flv.hpp), fed in pieces of any size: the file header,
// PreviousTagSize0, then for each tag its header, its body and the PreviousTagSize after it. It
// keeps only the few bytes of a header or PreviousTagSize split across pieces; a tag body is
// handed back as it passes, never held. What the units mean is the caller's business: FlvParser
// (whole tags for uploads and pulls) copies bodies and tolerates wrong PreviousTagSizes;
// record::RecordingScanner (the valid prefix of a recording) keeps the first bytes of each body and
// stops at a wrong PreviousTagSize.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "media/flv/flv.hpp"
#include "base/result.hpp"

namespace sluice::media {

class FlvReader {
 public:
  enum class State : uint8_t { FileHeader, HeaderGap, PreviousTagSize, TagHeader, TagBody };

  // What one step completed.
  enum class Done : uint8_t {
    Nothing,
    FileHeader,       // file_header() is set
    PreviousTagSize,  // previous_tag_size() is set; PreviousTagSize0 when tags() is 0
    TagHeader,        // tag() is set (a tag whose DataSize is 0 has its empty body complete too)
    TagBody,          // the body of tag() is complete
  };
  struct Step {
    size_t used = 0;  // bytes of the input consumed (at least one)
    Done done = Done::Nothing;
    std::span<const uint8_t> body;  // the part of tag()'s body among them
  };

  // Reads from the start of `in` (not empty), up to the end of the current unit at most.
  // Errors: a file header that is not FLV's (parse_flv_header()); the reader is not used after.
  Result<Step> step(std::span<const uint8_t> in);

  State state() const { return state_; }
  // The bytes of the current fixed-size unit (file header, PreviousTagSize, tag header) so far.
  std::span<const uint8_t> partial() const { return {fixed_.data(), fill_}; }
  const FlvFileHeader& file_header() const { return header_; }
  const FlvTagHeader& tag() const { return tag_; }
  uint32_t previous_tag_size() const { return previous_tag_size_; }
  uint64_t tags() const { return tags_; }  // tag headers read

 private:
  // Copies bytes of `in` into fixed_ until it holds `want`; returns how many it took.
  size_t fill(std::span<const uint8_t> in, size_t want);

  State state_ = State::FileHeader;
  std::array<uint8_t, kFlvTagHeaderSize> fixed_{};
  size_t fill_ = 0;
  uint64_t gap_ = 0;        // bytes between the file header and DataOffset still to skip
  uint32_t body_left_ = 0;  // of the current tag's body
  FlvFileHeader header_;
  FlvTagHeader tag_;
  uint32_t previous_tag_size_ = 0;
  uint64_t tags_ = 0;
};

}  // namespace sluice::media
