// Recordings (`.part` bytes) built in memory the way the recorder writes them, with
// media/flv/flv.hpp's write_flv_header() and append_tag(), plus a reader of tags for checks.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "media/flv/flv.hpp"
#include "protocol/amf0.hpp"

namespace sluice::media::record::test {

using Bytes = std::vector<uint8_t>;

struct Tag {
  uint8_t type = 0;
  uint32_t ts = 0;
  Bytes body;
};

// A tag found in a file, with where it starts.
struct FoundTag {
  uint64_t offset = 0;
  Tag tag;
};

inline Bytes publisher_metadata(bool stale_index = false) {
  namespace amf = protocol::amf;
  amf::Properties props = {
      {"duration", amf::Value::number(0)},      {"width", amf::Value::number(1280)},
      {"height", amf::Value::number(720)},      {"videocodecid", amf::Value::number(7)},
      {"audiocodecid", amf::Value::number(10)}, {"encoder", amf::Value::string("obs-output module")},
      {"filesize", amf::Value::number(0)},
  };
  if (stale_index) {
    props.emplace_back("keyframes",
                       amf::Value::object({{"filepositions", amf::Value::strict_array({amf::Value::number(1)})},
                                           {"times", amf::Value::strict_array({amf::Value::number(0)})}}));
    props.emplace_back("lastkeyframelocation", amf::Value::number(12345));
  }
  Bytes out;
  amf::encode_amf0(amf::Value::string("onMetaData"), out);
  amf::encode_amf0(amf::Value::ecma_array(std::move(props)), out);
  return out;
}

inline const Bytes kAvcSequenceHeader = {0x17, 0x00, 0, 0, 0, 1, 0x64, 0, 0x1F, 0xFF, 0xE0, 0x00};
inline const Bytes kAacSequenceHeader = {0xAF, 0x00, 0x12, 0x10};
// Enhanced RTMP: SequenceStart (0) of key frames, 'hvc1', then a (fake) hvcC.
inline const Bytes kHevcSequenceStart = {0x90, 'h', 'v', 'c', '1', 0x01, 0x01, 0x60, 0, 0, 0};

inline Bytes avc_frame(bool key, size_t payload) {
  Bytes b{uint8_t(key ? 0x17 : 0x27), 0x01, 0, 0, 40};
  b.resize(b.size() + payload, uint8_t(payload));
  return b;
}
// Enhanced RTMP CodedFrames (1): frame type 1 (key) or 2 (inter), 'hvc1', SI24 CTS.
inline Bytes hevc_frame(bool key, size_t payload) {
  Bytes b{uint8_t(key ? 0x91 : 0xA1), 'h', 'v', 'c', '1', 0, 0, 0};
  b.resize(b.size() + payload, uint8_t(payload));
  return b;
}
inline Bytes aac_frame(size_t payload) {
  Bytes b{0xAF, 0x01};
  b.resize(b.size() + payload, uint8_t(payload));
  return b;
}

// A recording: metadata, sequence headers, `frames` video frames at 25 fps with a keyframe every
// 25th, and an AAC frame (23 ms apart, ~43 per second) after each video frame it precedes.
inline std::vector<Tag> recording_tags(uint32_t frames = 100, bool hevc = false, bool with_metadata = true) {
  std::vector<Tag> tags;
  if (with_metadata) tags.push_back({18, 0, publisher_metadata()});
  tags.push_back({9, 0, hevc ? kHevcSequenceStart : kAvcSequenceHeader});
  tags.push_back({8, 0, kAacSequenceHeader});
  uint32_t audio_ms = 0;
  for (uint32_t i = 0; i < frames; ++i) {
    const uint32_t video_ms = i * 40;
    const bool key = i % 25 == 0;
    const size_t size = key ? 300 + i : 40 + i % 17;
    tags.push_back({9, video_ms, hevc ? hevc_frame(key, size) : avc_frame(key, size)});
    for (; audio_ms <= video_ms + 40; audio_ms += 23) tags.push_back({8, audio_ms, aac_frame(20 + audio_ms % 11)});
  }
  return tags;
}

inline Bytes part_bytes(const std::vector<Tag>& tags, std::vector<uint64_t>* offsets = nullptr) {
  Bytes out;
  write_flv_header(true, true, out);
  for (const Tag& t : tags) {
    if (offsets) offsets->push_back(out.size());
    append_tag(t.type, t.ts, t.body, out);
  }
  return out;
}

// Every whole tag after the FLV header (no validation beyond fitting in the file).
inline std::vector<FoundTag> read_tags(std::span<const uint8_t> file) {
  std::vector<FoundTag> found;
  uint64_t pos = kFlvFileHeaderSize + kFlvPreviousTagSizeSize;
  while (pos + kFlvTagHeaderSize <= file.size()) {
    auto h = parse_tag_header(file.subspan(pos));
    if (!h || pos + kFlvTagHeaderSize + h->data_size + kFlvPreviousTagSizeSize > file.size()) break;
    const auto body = file.subspan(pos + kFlvTagHeaderSize, h->data_size);
    found.push_back({pos, {h->type, h->timestamp, Bytes(body.begin(), body.end())}});
    pos += kFlvTagHeaderSize + h->data_size + kFlvPreviousTagSizeSize;
  }
  return found;
}

// The onMetaData ECMA array of a file's first tag.
inline std::optional<protocol::amf::Value> first_metadata(std::span<const uint8_t> file) {
  const auto tags = read_tags(file);
  if (tags.empty() || tags[0].tag.type != 18) return std::nullopt;
  auto values = protocol::amf::decode_amf0_all(tags[0].tag.body);
  if (!values || values->size() != 2 || (*values)[0].as_string() != "onMetaData") return std::nullopt;
  return (*values)[1];
}

}  // namespace sluice::media::record::test
