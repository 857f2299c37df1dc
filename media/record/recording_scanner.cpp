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

std::string at_byte(const char* what, uint64_t offset) {
  return std::string(what) + " at byte " + std::to_string(offset);
}

}  // namespace

void RecordingScanner::feed(std::span<const uint8_t> bytes) {
  using Done = FlvReader::Done;
  while (!bytes.empty()) {
    if (stopped_) {
      pos_ += bytes.size();  // only counted: rule 1
      return;
    }
    auto s = reader_.step(bytes);
    if (!s) {
      stop("not an FLV file");
      continue;
    }
    pos_ += s->used;
    bytes = bytes.subspan(s->used);
    if (!s->body.empty()) on_body(s->body);
    if (s->done == Done::TagHeader) on_tag_header();
    if (s->done == Done::PreviousTagSize) on_previous_tag_size();
  }
}

void RecordingScanner::on_tag_header() {
  const FlvTagHeader& tag = reader_.tag();
  // DataSize is a u24, so no tag can claim more than 16 MiB: no further size check is needed.
  if (!is_recorded_tag_type(tag)) {
    stop("unexpected tag type " + std::to_string(tag.type) + at_byte("", unit_offset_));
    return;
  }
  body_head_len_ = 0;
  classified_ = false;
  capturing_metadata_ = false;
  if (tag.data_size == 0) classify_body_head();
}

void RecordingScanner::on_body(std::span<const uint8_t> bytes) {
  if (!classified_) {
    // The first bytes decide what the tag is; they are copied aside in case a chunk ends inside.
    const size_t want = std::min<size_t>(reader_.tag().data_size, kFlvTagHeadBytes);
    const size_t n = std::min(want - body_head_len_, bytes.size());
    std::memcpy(body_head_ + body_head_len_, bytes.data(), n);
    body_head_len_ += n;
    bytes = bytes.subspan(n);
    if (body_head_len_ < want) return;
    classify_body_head();
  }
  if (capturing_metadata_) metadata_capture_.insert(metadata_capture_.end(), bytes.begin(), bytes.end());
}

void RecordingScanner::classify_body_head() {
  classified_ = true;
  const FlvTagHeader& tag = reader_.tag();
  const auto head = std::span<const uint8_t>(body_head_, body_head_len_);
  const FlvTagHead c = read_flv_tag_head(tag.type, head, tag.data_size);
  tag_keyframe_ = tag.type == kTagVideo && c.keyframe;
  tag_is_metadata_ = tag.type == kTagScript && c.on_metadata && !summary_.metadata;
  // A bigger one is still the metadata tag (it is replaced), but its body is not kept: rule 3.
  capturing_metadata_ = tag_is_metadata_ && tag.data_size <= vod::kMaxFlvMetadataBytes;
  metadata_capture_.clear();
  // Not reserved from DataSize: memory follows the bytes that actually arrive.
  if (capturing_metadata_) metadata_capture_.assign(head.begin(), head.end());
}

void RecordingScanner::on_previous_tag_size() {
  if (reader_.tags() == 0) {
    // PreviousTagSize0: its value carries nothing (it is 0 in every writer); only its presence
    // matters.
    summary_.flv_header_ok = true;
    summary_.tags_offset = pos_;
    summary_.valid_bytes = pos_;
    unit_offset_ = pos_;
    return;
  }
  const uint32_t data_size = reader_.tag().data_size;
  const uint64_t field_offset = unit_offset_ + kFlvTagHeaderSize + data_size;
  if (reader_.previous_tag_size() != kFlvTagHeaderSize + data_size) {
    stop(at_byte("PreviousTagSize mismatch", field_offset));
    return;
  }
  commit_tag();
  unit_offset_ = field_offset + kFlvPreviousTagSizeSize;
  summary_.valid_bytes = unit_offset_;
}

void RecordingScanner::commit_tag() {
  const FlvTagHeader& tag = reader_.tag();
  ++summary_.tag_count;
  if (tag_is_metadata_) {
    tag_is_metadata_ = false;
    RecordedMetadata m;
    m.tag = {unit_offset_, kFlvTagHeaderSize + uint64_t{tag.data_size} + kFlvPreviousTagSizeSize};
    m.payload = std::move(metadata_capture_);
    metadata_capture_ = {};
    summary_.metadata = std::move(m);
    return;
  }
  if (tag.type == kTagScript) return;
  const bool first = !summary_.has_audio && !summary_.has_video;
  (tag.type == kTagAudio ? summary_.has_audio : summary_.has_video) = true;
  if (first) summary_.first_timestamp_ms = tag.timestamp;
  summary_.last_timestamp_ms = first ? tag.timestamp : std::max(summary_.last_timestamp_ms, tag.timestamp);
  if (tag_keyframe_) add_keyframe(tag.timestamp, unit_offset_);
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
  stopped_ = true;
  summary_.stop_reason = std::move(reason);
  metadata_capture_ = {};
}

RecordingSummary RecordingScanner::finish() const {
  using State = FlvReader::State;
  RecordingSummary s = summary_;
  if (!stopped_) {
    switch (reader_.state()) {
      case State::TagHeader:
        if (!reader_.partial().empty()) s.stop_reason = at_byte("torn tag", unit_offset_);
        break;
      case State::TagBody: s.stop_reason = at_byte("torn tag", unit_offset_); break;
      case State::PreviousTagSize:
        s.stop_reason = reader_.tags() == 0 ? "torn FLV header" : at_byte("torn tag", unit_offset_);
        break;
      case State::FileHeader: {
        static constexpr uint8_t kSignature[] = {'F', 'L', 'V'};
        const auto got = reader_.partial();
        const size_t n = std::min<size_t>(got.size(), sizeof kSignature);
        const bool looks_flv = !got.empty() && std::memcmp(got.data(), kSignature, n) == 0;
        s.stop_reason = looks_flv ? "torn FLV header" : "not an FLV file";
        break;
      }
      case State::HeaderGap: s.stop_reason = "torn FLV header"; break;
    }
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
