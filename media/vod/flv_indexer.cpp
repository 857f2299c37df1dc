#include "media/vod/flv_indexer.hpp"

#include <algorithm>
#include <string>

#include "media/codec/aac.hpp"
#include "media/codec/avc.hpp"
#include "media/codec/hevc.hpp"
#include "media/flv/flv.hpp"
#include "media/vod/metadata_builder.hpp"

namespace sluice::media::vod {

namespace {

// Bytes a tag's first step needs: its header and the part of the body read_flv_tag_head() reads.
constexpr uint64_t kTagProbeBytes = kFlvTagHeaderSize + kFlvTagHeadBytes;
// A legacy AVC/HEVC sequence header body: 0x17 0x00 + SI24 CTS, then the configuration record.
constexpr size_t kLegacyVideoConfigOffset = 5;
constexpr size_t kEnhancedVideoConfigOffset = 5;  // byte0 + FourCC
constexpr size_t kAacConfigOffset = 2;            // 0xAF 0x00

// Picture size and audio format from the stored sequence headers, for stats and the built
// onMetaData. Unparseable configurations just leave the fields at 0.
void learn_from_sequence_headers(MediaIndex& index) {
  const auto& v = index.video_sequence_header;
  if (v.size() > kLegacyVideoConfigOffset) {
    const auto record = std::span(v).subspan(v[0] & 0x80 ? kEnhancedVideoConfigOffset : kLegacyVideoConfigOffset);
    if (index.video_codec == VideoCodec::Avc) {
      if (auto c = parse_avc_config(record)) index.width = c->width, index.height = c->height;
    } else if (index.video_codec == VideoCodec::Hevc) {
      if (auto c = parse_hevc_config(record)) index.width = c->width, index.height = c->height;
    }
  }
  const auto& a = index.audio_sequence_header;
  if (index.audio_codec == AudioCodec::Aac && a.size() > kAacConfigOffset && a[0] >> 4 == kSoundFormatAac) {
    if (auto c = parse_aac_config(std::span(a).subspan(kAacConfigOffset))) {
      index.audio_sample_rate = c->sample_rate;
      index.audio_channels = c->channels;
    }
  }
}

}  // namespace

FlvIndexer::FlvIndexer(uint64_t file_size) : file_size_(file_size), want_(kFlvFileHeaderSize) {
  index_.container = Container::Flv;
  index_.file_size = file_size;
}

ByteRange FlvIndexer::next_request() const {
  if (state_ == State::Done || state_ == State::Failed || pos_ >= file_size_) return {pos_, 0};
  return {pos_, std::min(want_, file_size_ - pos_)};
}

Result<void> FlvIndexer::fail(Error e) {
  state_ = State::Failed;
  error_ = e;
  return e;
}

Result<void> FlvIndexer::feed(uint64_t offset, std::span<const uint8_t> bytes) {
  if (state_ == State::Failed) return error_;
  if (state_ == State::Done) return ok();
  const ByteRange need = next_request();
  if (offset > need.offset || offset + bytes.size() < need.end()) {
    return fail(Error(Errc::BadState, "FLV indexer fed bytes [" + std::to_string(offset) + ", " +
                                          std::to_string(offset + bytes.size()) + ") that do not cover [" +
                                          std::to_string(need.offset) + ", " + std::to_string(need.end()) + ")"));
  }
  while (state_ != State::Done && pos_ >= offset && pos_ - offset <= bytes.size()) {
    auto progressed = step(bytes.subspan(static_cast<size_t>(pos_ - offset)));
    if (!progressed) return fail(std::move(progressed).error());
    if (!*progressed) break;
  }
  settle();
  return ok();
}

void FlvIndexer::settle() {
  // Less than a tag header left: the scan is over (rule 2), whether or not bytes were fed there.
  if (state_ == State::Tags && (pos_ >= file_size_ || file_size_ - pos_ < kFlvTagHeaderSize)) state_ = State::Done;
}

Result<bool> FlvIndexer::step(std::span<const uint8_t> avail) {
  // Rule 2: a unit that does not fit in the file is a truncated end, not an error.
  if (pos_ >= file_size_) {
    state_ = State::Done;
    return false;
  }
  return state_ == State::FileHeader ? step_file_header(avail) : step_tag(avail);
}

Result<bool> FlvIndexer::step_file_header(std::span<const uint8_t> avail) {
  if (avail.size() < kFlvFileHeaderSize) {
    if (file_size_ < kFlvFileHeaderSize) return Error(Errc::Malformed, "file too short for an FLV header");
    want_ = kFlvFileHeaderSize;
    return false;
  }
  auto header = parse_flv_header(avail);
  if (!header) return std::move(header).error().wrap("FLV file header");
  // The body starts at DataOffset with PreviousTagSize0, which carries nothing.
  pos_ = uint64_t{header->data_offset} + kFlvPreviousTagSizeSize;
  want_ = kTagProbeBytes;
  state_ = State::Tags;
  return true;
}

Result<bool> FlvIndexer::step_tag(std::span<const uint8_t> avail) {
  if (file_size_ - pos_ < kFlvTagHeaderSize) {
    state_ = State::Done;
    return false;
  }
  const uint64_t probe = std::min(kTagProbeBytes, file_size_ - pos_);
  if (avail.size() < probe) {
    want_ = kTagProbeBytes;
    return false;
  }
  auto header = parse_tag_header(avail);
  if (!header) return std::move(header).error();
  const uint64_t body_offset = pos_ + kFlvTagHeaderSize;
  if (header->data_size > file_size_ - body_offset) {
    state_ = State::Done;  // rule 2: the last tag is cut short
    return false;
  }
  const auto body = avail.subspan(kFlvTagHeaderSize);
  const FlvTagHead c =
      read_flv_tag_head(header->type, body.first(std::min<size_t>(body.size(), header->data_size)), header->data_size);
  if (keeps_body(header->type, c, header->data_size)) {
    if (body.size() < header->data_size) {
      want_ = kFlvTagHeaderSize + uint64_t{header->data_size};
      return false;
    }
    keep_body(header->type, body.first(header->data_size));
  } else if (header->type == kSampleAudio || header->type == kSampleVideo || header->type == kSampleScript) {
    auto added = add_sample(header->type, c, body_offset, header->data_size, header->timestamp);
    if (!added) return std::move(added).error();
  }
  learn_codecs(header->type, c);
  pos_ = body_offset + header->data_size + kFlvPreviousTagSizeSize;
  want_ = kTagProbeBytes;
  return true;
}

bool FlvIndexer::keeps_body(uint8_t type, const FlvTagHead& c, uint32_t size) const {
  if (type == kSampleScript) return c.on_metadata && !seen_metadata_ && size <= kMaxFlvMetadataBytes;
  if (!c.sequence_header || size > kMaxFlvSequenceHeaderBytes) return false;
  if (type == kSampleVideo) return !seen_video_frame_ && index_.video_sequence_header.empty();
  if (type == kSampleAudio) return !seen_audio_frame_ && index_.audio_sequence_header.empty();
  return false;
}

void FlvIndexer::keep_body(uint8_t type, std::span<const uint8_t> body) {
  auto& dest = type == kSampleScript  ? index_.metadata
               : type == kSampleVideo ? index_.video_sequence_header
                                      : index_.audio_sequence_header;
  dest.assign(body.begin(), body.end());
  if (type == kSampleScript) seen_metadata_ = true;
}

Result<void> FlvIndexer::add_sample(uint8_t type, const FlvTagHead& c, uint64_t body_offset, uint32_t size,
                                    uint32_t timestamp) {
  if (index_.samples.size() >= kMaxFlvSamples) return Error(Errc::LimitExceeded, "FLV file has too many tags");
  const auto number = static_cast<uint32_t>(index_.samples.size());
  Sample s;
  s.file_offset = body_offset;
  s.size = size;
  s.dts_ms = timestamp;
  s.cts_ms = type == kSampleVideo ? c.cts_ms : 0;
  s.type = type;
  s.keyframe = type == kSampleVideo && c.keyframe;
  s.sequence_header = c.sequence_header;
  index_.samples.push_back(s);
  if (s.sequence_header) index_.sequence_header_samples.push_back(number);
  // Keyframe times must ascend for binary search; a keyframe that goes back in time is still
  // played, just not offered as a seek point.
  if (s.keyframe && (index_.keyframes.empty() || timestamp >= index_.keyframes.back().time_ms)) {
    index_.keyframes.push_back({number, timestamp});
  }
  if (type == kSampleVideo && !c.sequence_header) seen_video_frame_ = true;
  if (type == kSampleAudio && !c.sequence_header) seen_audio_frame_ = true;
  if (type != kSampleScript) index_.duration_ms = std::max(index_.duration_ms, timestamp);
  return ok();
}

void FlvIndexer::learn_codecs(uint8_t type, const FlvTagHead& c) {
  if (type == kSampleVideo) {
    index_.has_video = true;
    if (index_.video_codec == VideoCodec::Unknown) index_.video_codec = c.video_codec;
  } else if (type == kSampleAudio) {
    index_.has_audio = true;
    if (index_.audio_codec == AudioCodec::Unknown) index_.audio_codec = c.audio_codec;
  }
}

Result<MediaIndex> FlvIndexer::finish() {
  if (state_ == State::Failed) return error_;
  if (state_ != State::Done) return Error(Errc::BadState, "FLV indexer finished before the end of the file");
  if (!index_.has_video && !index_.has_audio) return Error(Errc::Malformed, "FLV file has no audio or video tags");
  learn_from_sequence_headers(index_);
  if (index_.metadata.empty()) index_.metadata = build_on_metadata(index_);
  index_.samples.shrink_to_fit();
  index_.keyframes.shrink_to_fit();
  state_ = State::Failed;  // the index has been moved out
  error_ = Error(Errc::BadState, "FLV index already taken");
  return std::move(index_);
}

Result<MediaIndex> index_flv(std::span<const uint8_t> file) {
  FlvIndexer indexer(file.size());
  while (!indexer.done()) {
    const ByteRange need = indexer.next_request();
    const auto piece = need.offset < file.size() ? file.subspan(static_cast<size_t>(need.offset)) : file.last(0);
    auto fed = indexer.feed(need.offset, piece);
    if (!fed) return std::move(fed).error();
  }
  return indexer.finish();
}

}  // namespace sluice::media::vod
