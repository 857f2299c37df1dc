// FlvFile: an FLV file loaded once and split into tags, shared read-only by every publisher.
//
// The bench keeps its own small reader (header, tags, previous-tag-size) rather than the
// server's media/ code: it only needs tag boundaries, types and timestamps, and a load
// generator should not change when the server's parser does.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "base/result.hpp"

namespace sluice::bench {

namespace flv_tag_type {
inline constexpr uint8_t kAudio = 8;
inline constexpr uint8_t kVideo = 9;
inline constexpr uint8_t kScript = 18;
}  // namespace flv_tag_type

struct FlvTag {
  uint8_t type = 0;        // 8 audio, 9 video, 18 script data (= the RTMP message type)
  uint32_t timestamp = 0;  // ms, with the extension byte applied
  uint32_t offset = 0;     // body position in FlvFile::bytes()
  uint32_t size = 0;
};

class FlvFile {
 public:
  // Reads the whole file. A truncated last tag is dropped (files being written end that way);
  // a bad signature, an encrypted tag or no media tag at all is an error.
  static Result<FlvFile> load(const std::string& path);
  // The same from bytes already in memory (tests).
  static Result<FlvFile> parse(std::vector<uint8_t> bytes);

  const std::vector<FlvTag>& tags() const { return tags_; }
  std::span<const uint8_t> body(const FlvTag& t) const { return {bytes_.data() + t.offset, t.size}; }
  // The first onMetaData script tag's body, empty when the file has none.
  std::span<const uint8_t> metadata() const;
  // Timestamps of the first and last audio/video tag, and the gap to leave between the last
  // tag of one loop and the first of the next (the typical video frame interval).
  uint32_t first_timestamp() const { return first_ts_; }
  uint32_t last_timestamp() const { return last_ts_; }
  uint32_t loop_gap_ms() const { return loop_gap_ms_; }
  bool truncated() const { return truncated_; }

 private:
  std::vector<uint8_t> bytes_;
  std::vector<FlvTag> tags_;
  int metadata_index_ = -1;
  uint32_t first_ts_ = 0;
  uint32_t last_ts_ = 0;
  uint32_t loop_gap_ms_ = 40;
  bool truncated_ = false;
};

}  // namespace sluice::bench
