#include "media/record/recording_scanner.hpp"

#include <algorithm>
#include <cstring>

#include "base/byte_io.hpp"

namespace sluice::media::record {

namespace {

constexpr uint8_t kTagAudio = kSampleAudio;
constexpr uint8_t kTagVideo = kSampleVideo;
constexpr uint8_t kTagScript = kSampleScript;

bool is_recorded_tag_type(const FlvTagHeader& h) {
  return !h.filter && (h.type == kTagAudio || h.type == kTagVideo || h.type == kTagScript);
}

std::string at_byte(const char* what, uint64_t offset) { return std::string(what) + " at byte " + std::to_string(offset); }

}  // namespace

void RecordingScanner::feed(std::span<const uint8_t> bytes) {
  while (!bytes.empty()) {
    if (phase_ == Phase::Stopped) {
      pos_ += bytes.size();  // only counted: rule 1
      return;
    }
    const size_t used = step(bytes);
    pos_ += used;
    bytes = bytes.subspan(used);
  }
}

size_t RecordingScanner::step(std::span<const uint8_t> in) {
  switch (phase_) {
    case Phase::FileHeader: return step_file_header(in);
    case Phase::HeaderGap: {
      const auto n = static_cast<size_t>(std::min<uint64_t>(skip_left_, in.size()));
      skip_left_ -= n;
      if (skip_left_ == 0) phase_ = Phase::PreviousTagSize0;
      return n;
    }
    case Phase::PreviousTagSize0: {
      // Its value carries nothing (it is 0 in every writer); only its presence matters.
      const size_t n = collect(in, kFlvPreviousTagSizeSize);
      if (small_len_ == kFlvPreviousTagSizeSize) {
        small_len_ = 0;
        summary_.flv_header_ok = true;
        summary_.tags_offset = pos_ + n;
        summary_.valid_bytes = pos_ + n;
        unit_offset_ = pos_ + n;
        phase_ = Phase::TagHeader;
      }
      return n;
    }
    case Phase::TagHeader: return step_tag_header(in);
    case Phase::TagBody: return step_tag_body(in);
    case Phase::TagTrailer: return step_tag_trailer(in);
    case Phase::Stopped: break;
  }
  return in.size();
}

size_t RecordingScanner::collect(std::span<const uint8_t> in, size_t want) {
  const size_t n = std::min(want - small_len_, in.size());
  std::memcpy(small_ + small_len_, in.data(), n);
  small_len_ += n;
  return n;
}

size_t RecordingScanner::step_file_header(std::span<const uint8_t> in) {
  const size_t n = collect(in, kFlvFileHeaderSize);
  if (small_len_ < kFlvFileHeaderSize) return n;
  small_len_ = 0;
  auto header = parse_flv_header({small_, kFlvFileHeaderSize});
  if (!header) {
    stop("not an FLV file");
    return n;
  }
  skip_left_ = header->data_offset - kFlvFileHeaderSize;
  phase_ = skip_left_ > 0 ? Phase::HeaderGap : Phase::PreviousTagSize0;
  return n;
}

size_t RecordingScanner::step_tag_header(std::span<const uint8_t> in) {
  const size_t n = collect(in, kFlvTagHeaderSize);
  if (small_len_ < kFlvTagHeaderSize) return n;
  small_len_ = 0;
  // DataSize is a u24, so no tag can claim more than 16 MiB: no further size check is needed.
  tag_ = *parse_tag_header({small_, kFlvTagHeaderSize});
  if (!is_recorded_tag_type(tag_)) {
    stop("unexpected tag type " + std::to_string(tag_.type) + at_byte("", unit_offset_));
    return n;
  }
  body_left_ = tag_.data_size;
  body_head_len_ = 0;
  classified_ = false;
  capturing_metadata_ = false;
  phase_ = Phase::TagBody;
  if (tag_.data_size == 0) classify_body_head();
  return n;
}

size_t RecordingScanner::step_tag_body(std::span<const uint8_t> in) {
  size_t used = 0;
  if (!classified_) {
    // The first bytes decide what the tag is; they are copied aside in case a chunk ends inside.
    const size_t want = std::min<size_t>(tag_.data_size, kFlvTagHeadBytes);
    const size_t n = std::min(want - body_head_len_, in.size());
    std::memcpy(body_head_ + body_head_len_, in.data(), n);
    body_head_len_ += n;
    body_left_ -= static_cast<uint32_t>(n);
    used = n;
    if (body_head_len_ < want) return used;
    classify_body_head();
  }
  const auto rest = in.subspan(used);
  const auto n = static_cast<size_t>(std::min<uint64_t>(body_left_, rest.size()));
  if (capturing_metadata_) metadata_capture_.insert(metadata_capture_.end(), rest.begin(), rest.begin() + n);
  body_left_ -= static_cast<uint32_t>(n);
  if (body_left_ == 0) phase_ = Phase::TagTrailer;
  return used + n;
}

void RecordingScanner::classify_body_head() {
  classified_ = true;
  const auto head = std::span<const uint8_t>(body_head_, body_head_len_);
  const FlvTagHead c = read_flv_tag_head(tag_.type, head, tag_.data_size);
  tag_keyframe_ = tag_.type == kTagVideo && c.keyframe;
  tag_is_metadata_ = tag_.type == kTagScript && c.on_metadata && !summary_.metadata;
  // A bigger one is still the metadata tag (it is replaced), but its body is not kept: rule 3.
  capturing_metadata_ = tag_is_metadata_ && tag_.data_size <= vod::kMaxFlvMetadataBytes;
  metadata_capture_.clear();
  // Not reserved from DataSize: memory follows the bytes that actually arrive.
  if (capturing_metadata_) metadata_capture_.assign(head.begin(), head.end());
  if (body_left_ == 0) phase_ = Phase::TagTrailer;
}

size_t RecordingScanner::step_tag_trailer(std::span<const uint8_t> in) {
  const size_t n = collect(in, kFlvPreviousTagSizeSize);
  if (small_len_ < kFlvPreviousTagSizeSize) return n;
  small_len_ = 0;
  const uint32_t previous_tag_size = load_u32be(small_);
  const uint64_t field_offset = unit_offset_ + kFlvTagHeaderSize + tag_.data_size;
  if (previous_tag_size != kFlvTagHeaderSize + tag_.data_size) {
    stop(at_byte("PreviousTagSize mismatch", field_offset));
    return n;
  }
  commit_tag();
  unit_offset_ = field_offset + kFlvPreviousTagSizeSize;
  summary_.valid_bytes = unit_offset_;
  phase_ = Phase::TagHeader;
  return n;
}

void RecordingScanner::commit_tag() {
  ++summary_.tag_count;
  if (tag_is_metadata_) {
    tag_is_metadata_ = false;
    RecordedMetadata m;
    m.tag = {unit_offset_, kFlvTagHeaderSize + uint64_t{tag_.data_size} + kFlvPreviousTagSizeSize};
    m.payload = std::move(metadata_capture_);
    metadata_capture_ = {};
    summary_.metadata = std::move(m);
    return;
  }
  if (tag_.type == kTagScript) return;
  const bool first = !summary_.has_audio && !summary_.has_video;
  (tag_.type == kTagAudio ? summary_.has_audio : summary_.has_video) = true;
  if (first) summary_.first_timestamp_ms = tag_.timestamp;
  summary_.last_timestamp_ms = first ? tag_.timestamp : std::max(summary_.last_timestamp_ms, tag_.timestamp);
  if (tag_keyframe_) add_keyframe(tag_.timestamp, unit_offset_);
}

void RecordingScanner::add_keyframe(uint32_t timestamp_ms, uint64_t tag_offset) {
  if (keyframes_seen_ > 0 && timestamp_ms < last_keyframe_ms_) return;  // rule 4: times ascend
  last_keyframe_ms_ = timestamp_ms;
  const uint64_t number = keyframes_seen_++;
  auto& list = summary_.keyframes;
  if (number % summary_.keyframe_stride != 0) return;
  list.push_back({timestamp_ms, tag_offset});
  if (list.size() < kMaxRecordedKeyframes) return;
  // Keep every other one: the listed keyframes stay those whose number is a multiple of stride.
  size_t kept = 0;
  for (size_t i = 0; i < list.size(); i += 2) list[kept++] = list[i];
  list.resize(kept);
  summary_.keyframe_stride *= 2;
}

void RecordingScanner::stop(std::string reason) {
  phase_ = Phase::Stopped;
  summary_.stop_reason = std::move(reason);
  metadata_capture_ = {};
}

RecordingSummary RecordingScanner::finish() const {
  RecordingSummary s = summary_;
  switch (phase_) {
    case Phase::Stopped: break;
    case Phase::TagHeader:
      if (small_len_ > 0) s.stop_reason = at_byte("torn tag", unit_offset_);
      break;
    case Phase::TagBody:
    case Phase::TagTrailer: s.stop_reason = at_byte("torn tag", unit_offset_); break;
    case Phase::FileHeader: {
      static constexpr uint8_t kSignature[] = {'F', 'L', 'V'};
      const size_t n = std::min<size_t>(small_len_, sizeof kSignature);
      const bool looks_flv = small_len_ > 0 && std::memcmp(small_, kSignature, n) == 0;
      s.stop_reason = looks_flv ? "torn FLV header" : "not an FLV file";
      break;
    }
    case Phase::HeaderGap:
    case Phase::PreviousTagSize0: s.stop_reason = "torn FLV header"; break;
  }
  s.torn_bytes = pos_ - s.valid_bytes;
  return s;
}

RecordingSummary scan_recording(std::span<const uint8_t> file) {
  RecordingScanner scanner;
  scanner.feed(file);
  return scanner.finish();
}

}  // namespace sluice::media::record
