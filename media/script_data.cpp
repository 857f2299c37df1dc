#include "media/script_data.hpp"

#include "base/byte_io.hpp"

namespace sluice::media {

namespace {

constexpr uint8_t kAmf0String = 0x02;

std::optional<std::string_view> read_amf0_string(ByteReader& r) {
  if (r.u8() != kAmf0String) return std::nullopt;
  const uint16_t len = r.u16be();
  const std::string_view s = r.string(len);
  if (r.failed()) return std::nullopt;
  return s;
}

}  // namespace

Result<std::string_view> leading_amf0_string(std::span<const uint8_t> payload) {
  ByteReader r(payload);
  auto s = read_amf0_string(r);
  if (!s) return Error(Errc::Malformed, "data message does not start with an AMF0 string");
  return *s;
}

bool is_on_metadata(std::span<const uint8_t> payload) {
  auto name = leading_amf0_string(payload);
  return name && *name == kOnMetaData;
}

bool is_set_data_frame(std::span<const uint8_t> payload) {
  ByteReader r(payload);
  auto first = read_amf0_string(r);
  return first && *first == kSetDataFrame && read_amf0_string(r).has_value();
}

bool is_set_data_frame_metadata(std::span<const uint8_t> payload) {
  ByteReader r(payload);
  auto first = read_amf0_string(r);
  if (!first || *first != kSetDataFrame) return false;
  auto second = read_amf0_string(r);
  return second && *second == kOnMetaData;
}

std::optional<Slice> strip_set_data_frame(const Slice& payload) {
  ByteReader r(payload.span());
  auto first = read_amf0_string(r);
  if (!first || *first != kSetDataFrame) return std::nullopt;
  const size_t name_at = r.position();
  if (!read_amf0_string(r)) return std::nullopt;
  return payload.share(name_at, payload.size() - name_at);
}

}  // namespace sluice::media
