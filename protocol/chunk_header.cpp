#include "protocol/chunk_header.hpp"

#include "base/byte_io.hpp"

namespace sluice::protocol {

size_t encode_basic_header(uint8_t fmt, uint32_t csid, uint8_t* out) {
  const auto high = static_cast<uint8_t>((fmt & 3) << 6);
  if (csid < 64) {
    out[0] = static_cast<uint8_t>(high | csid);
    return 1;
  }
  const uint32_t rest = csid - 64;
  if (csid < 320) {
    out[0] = high;  // csid6 = 0: one more byte
    out[1] = static_cast<uint8_t>(rest);
    return 2;
  }
  out[0] = static_cast<uint8_t>(high | 1);  // csid6 = 1: two more bytes, low byte first
  out[1] = static_cast<uint8_t>(rest & 0xFF);
  out[2] = static_cast<uint8_t>(rest >> 8);
  return 3;
}

size_t decode_basic_header(std::span<const uint8_t> in, uint8_t& fmt, uint32_t& csid) {
  if (in.empty()) return 0;
  const size_t size = basic_header_size_from_byte0(in[0]);
  if (in.size() < size) return 0;
  fmt = static_cast<uint8_t>(in[0] >> 6);
  switch (size) {
    case 1: csid = in[0] & 0x3Fu; break;
    case 2: csid = 64u + in[1]; break;
    default: csid = 64u + in[1] + 256u * in[2]; break;
  }
  return size;
}

namespace {

// Whether the header carries the 4-byte extended timestamp field.
bool has_extended_field(const ChunkHeader& h) {
  return h.fmt == chunk_fmt::kNone ? h.extended : needs_extended_timestamp(h.timestamp);
}

void store_u32le(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

uint32_t load_u32le(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

}  // namespace

size_t chunk_header_size(const ChunkHeader& h) {
  return basic_header_size(h.csid) + message_header_size(h.fmt) + (has_extended_field(h) ? 4 : 0);
}

size_t encode_chunk_header(const ChunkHeader& h, uint8_t* out) {
  size_t n = encode_basic_header(h.fmt, h.csid, out);
  const bool extended = has_extended_field(h);
  if (h.fmt <= chunk_fmt::kDeltaOnly) {
    store_u24be(out + n, extended ? kExtendedTimestampMarker : h.timestamp);
    n += 3;
  }
  if (h.fmt <= chunk_fmt::kSameStream) {
    store_u24be(out + n, h.length);
    out[n + 3] = h.type;
    n += 4;
  }
  if (h.fmt == chunk_fmt::kFull) {
    store_u32le(out + n, h.stream_id);
    n += 4;
  }
  if (extended) {
    store_u32be(out + n, h.timestamp);
    n += 4;
  }
  return n;
}

void append_chunk_header(const ChunkHeader& h, std::vector<uint8_t>& out) {
  uint8_t buf[kMaxChunkHeaderSize];
  const size_t n = encode_chunk_header(h, buf);
  out.insert(out.end(), buf, buf + n);
}

size_t decode_chunk_header(std::span<const uint8_t> in, bool type3_extended, ChunkHeader& h) {
  h = ChunkHeader{};
  const size_t basic = decode_basic_header(in, h.fmt, h.csid);
  if (basic == 0) return 0;
  const size_t fixed = basic + message_header_size(h.fmt);
  if (in.size() < fixed) return 0;
  const uint8_t* p = in.data() + basic;
  uint32_t field = 0;
  if (h.fmt <= chunk_fmt::kDeltaOnly) field = load_u24be(p);
  if (h.fmt <= chunk_fmt::kSameStream) {
    h.length = load_u24be(p + 3);
    h.type = p[6];
  }
  if (h.fmt == chunk_fmt::kFull) h.stream_id = load_u32le(p + 7);
  h.extended = h.fmt == chunk_fmt::kNone ? type3_extended : field == kExtendedTimestampMarker;
  h.timestamp = field;
  if (!h.extended) return fixed;
  if (in.size() < fixed + 4) return 0;
  h.timestamp = load_u32be(in.data() + fixed);
  return fixed + 4;
}

}  // namespace sluice::protocol
