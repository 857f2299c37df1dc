#include "media/record/final_metadata.hpp"

#include <algorithm>
#include <cassert>
#include <string>
#include <string_view>

#include "media/script_data.hpp"
#include "protocol/amf0.hpp"

namespace sluice::media::record {

namespace amf = protocol::amf;

namespace {

// One keyframe costs two AMF0 numbers: a marker byte and a double each.
constexpr size_t kBytesPerKeyframe = 2 * (1 + 8);
constexpr uint16_t kMaxMemberName = 0xFFFF;

// The original's properties, or none when it does not decode as "onMetaData" + an object.
amf::Properties original_properties(std::span<const uint8_t> original) {
  if (original.empty()) return {};
  amf::DecodeLimits limits;
  limits.max_total_bytes = 2 * vod::kMaxFlvMetadataBytes;  // the body itself is at most 4 MiB
  ByteReader in(original);
  auto name = amf::decode_amf0(in, limits);
  if (!name || name->as_string() != kOnMetaData) return {};
  auto value = amf::decode_amf0(in, limits);  // anything after it is dropped
  if (!value || !value->is_object_like()) return {};
  amf::Properties props = std::move(value->properties());
  // The index is rebuilt; a stale one from the publisher's source file must not survive. An empty
  // name would read as the end of the array, and a longer one than a u16 cannot be written.
  std::erase_if(props, [](const amf::Property& p) {
    return p.first == "keyframes" || p.first.empty() || p.first.size() > kMaxMemberName;
  });
  return props;
}

// Replaces the first member named `key` in place (dropping later duplicates), or appends it.
void put(amf::Properties& props, std::string_view key, amf::Value v) {
  auto it = std::find_if(props.begin(), props.end(), [&](const amf::Property& p) { return p.first == key; });
  if (it == props.end()) {
    props.emplace_back(std::string(key), std::move(v));
    return;
  }
  it->second = std::move(v);
  props.erase(std::remove_if(it + 1, props.end(), [&](const amf::Property& p) { return p.first == key; }), props.end());
}

void erase_member(amf::Properties& props, std::string_view key) {
  std::erase_if(props, [&](const amf::Property& p) { return p.first == key; });
}

double seconds(uint32_t ms) { return ms / 1000.0; }

void write_name(ByteWriter& w, std::string_view name) {
  w.u16be(static_cast<uint16_t>(name.size()));
  w.string(name);
}

void write_number_array(ByteWriter& w, std::string_view name, const std::vector<KeyframeRef>& keyframes,
                        double (*value)(const KeyframeRef&, uint64_t), uint64_t head_size) {
  write_name(w, name);
  w.u8(amf::amf0_marker::kStrictArray);
  w.u32be(static_cast<uint32_t>(keyframes.size()));
  for (const KeyframeRef& k : keyframes) {
    w.u8(amf::amf0_marker::kNumber);
    w.f64be(value(k, head_size));
  }
}

// One encoding of the body, for a head of `head_size` bytes. Written by hand around
// encode_amf0() so that a keyframe is 18 bytes, not a tree of amf::Values.
std::vector<uint8_t> encode(amf::Properties& props, const FinalMetadataFacts& f,
                            const std::vector<KeyframeRef>& keyframes, uint64_t head_size) {
  put(props, "duration", amf::Value::number(seconds(f.duration_ms)));
  put(props, "filesize", amf::Value::number(static_cast<double>(head_size + f.tags_size)));
  put(props, "hasVideo", amf::Value::boolean(f.has_video));
  put(props, "hasKeyframes", amf::Value::boolean(!keyframes.empty()));
  put(props, "hasAudio", amf::Value::boolean(f.has_audio));
  put(props, "hasMetadata", amf::Value::boolean(true));
  put(props, "canSeekToEnd", amf::Value::boolean(true));
  put(props, "lasttimestamp", amf::Value::number(seconds(f.last_timestamp_ms)));
  if (!keyframes.empty()) {
    put(props, "lastkeyframetimestamp", amf::Value::number(seconds(keyframes.back().timestamp_ms)));
    put(props, "lastkeyframelocation",
        amf::Value::number(static_cast<double>(head_size + keyframes.back().tag_offset)));
  } else {
    erase_member(props, "lastkeyframetimestamp");  // a publisher's would be about another file
    erase_member(props, "lastkeyframelocation");
  }

  std::vector<uint8_t> out;
  amf::encode_amf0(amf::Value::string(std::string(kOnMetaData)), out);
  ByteWriter w(out);
  w.u8(amf::amf0_marker::kEcmaArray);
  w.u32be(static_cast<uint32_t>(props.size() + 1));  // a hint only; + keyframes
  for (const auto& [name, value] : props) {
    write_name(w, name);
    amf::encode_amf0(value, out);
  }
  write_name(w, "keyframes");
  w.u8(amf::amf0_marker::kObject);
  write_number_array(
      w, "filepositions", keyframes,
      [](const KeyframeRef& k, uint64_t head) { return static_cast<double>(head + k.tag_offset); }, head_size);
  write_number_array(
      w, "times", keyframes, [](const KeyframeRef& k, uint64_t) { return seconds(k.timestamp_ms); }, head_size);
  for (int end_of_object = 0; end_of_object < 2; ++end_of_object) {  // keyframes, then the array
    w.u16be(0);
    w.u8(amf::amf0_marker::kObjectEnd);
  }
  return out;
}

// Every `stride`-th keyframe, so that at most `room` remain.
std::vector<KeyframeRef> thinned(const std::vector<KeyframeRef>& all, size_t room) {
  if (all.size() <= room) return all;
  if (room == 0) return {};
  const size_t stride = (all.size() + room - 1) / room;
  std::vector<KeyframeRef> kept;
  kept.reserve(room);
  for (size_t i = 0; i < all.size(); i += stride) kept.push_back(all[i]);
  return kept;
}

}  // namespace

std::vector<uint8_t> build_final_metadata(std::span<const uint8_t> original, const FinalMetadataFacts& facts) {
  amf::Properties props = original_properties(original);
  // The size with at most one keyframe (which adds the lastkeyframe* members) tells how many fit.
  const std::vector<KeyframeRef> one(facts.keyframes.begin(),
                                     facts.keyframes.begin() + (facts.keyframes.empty() ? 0 : 1));
  size_t base = encode(props, facts, one, 0).size();
  if (base > kFlvMaxDataSize) {
    props.clear();  // absurdly large publisher metadata: only ours is written
    base = encode(props, facts, one, 0).size();
  }
  const size_t room = one.size() + (kFlvMaxDataSize - base) / kBytesPerKeyframe;
  const auto keyframes = thinned(facts.keyframes, room);

  const size_t size = encode(props, facts, keyframes, 0).size();
  auto body = encode(props, facts, keyframes, kFinalHeadOverhead + size);
  // Fixed-width numbers: the real positions cannot change the size they were computed from.
  assert(body.size() == size && body.size() <= kFlvMaxDataSize);
  (void)size;
  return body;
}

}  // namespace sluice::media::record
