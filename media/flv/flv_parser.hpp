// FlvParser: push-fed FLV reader for uploads, HTTP-FLV pulls and file scans, on FlvReader's framing
// (flv_reader.hpp). Feed it bytes in pieces of any size; it returns each tag, its body copied once,
// as soon as the body is complete (without waiting for the PreviousTagSize after it), so a file
// whose last tag is cut short yields every whole tag and simply reports mid_tag().
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "media/flv/flv.hpp"
#include "media/flv/flv_reader.hpp"
#include "base/bytes.hpp"
#include "base/result.hpp"

namespace sluice::media {

struct FlvTag {
  uint8_t type = 0;
  bool filter = false;
  uint32_t timestamp = 0;
  uint32_t stream_id = 0;
  Slice body;  // copied once from the input into its own payload
};

class FlvParser {
 public:
  struct Limits {
    // Bodies above this are refused before any is buffered (an upload endpoint may want far less
    // than the format's 16 MiB, so one request cannot pin that much memory).
    uint32_t max_tag_size = kFlvMaxDataSize;
  };

  FlvParser() = default;
  explicit FlvParser(Limits limits) : limits_(limits) {}

  // Consumes all of `bytes`. Returns the tags completed by them. After an error the parser is
  // failed and every later call returns the same error.
  Result<std::vector<FlvTag>> feed(std::span<const uint8_t> bytes);

  const std::optional<FlvFileHeader>& header() const { return header_; }
  // True when the input so far ends inside a tag header or body: if the stream ends now, its last
  // tag is truncated (and was not returned).
  bool mid_tag() const {
    using State = FlvReader::State;
    return !failed_ &&
           (reader_.state() == State::TagHeader ? !reader_.partial().empty() : reader_.state() == State::TagBody);
  }
  uint64_t tags_parsed() const { return tags_; }
  // PreviousTagSize fields that disagree with the tag before them (tolerated: many writers get
  // them wrong, and nothing here depends on them).
  uint64_t previous_size_mismatches() const { return previous_size_mismatches_; }

 private:
  Result<void> on_step(const FlvReader::Step& s, std::vector<FlvTag>& out);
  void take_body(const FlvReader::Step& s, std::vector<FlvTag>& out);
  void emit(Slice body, std::vector<FlvTag>& out);

  Limits limits_;
  FlvReader reader_;
  bool failed_ = false;
  Error error_;
  std::optional<FlvFileHeader> header_;
  std::vector<uint8_t> body_;   // a body split across feeds
  uint32_t last_tag_size_ = 0;  // expected next PreviousTagSize
  uint64_t tags_ = 0;
  uint64_t previous_size_mismatches_ = 0;
};

}  // namespace sluice::media
