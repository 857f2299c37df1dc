// Chunk headers (docs/protocol.md, "Chunk headers"): the stateless encode and decode of the basic
// header (1-3 bytes, csid 2..65599), the message header (fmt 0-3: 11, 7, 3 or 0 bytes) and the
// 4-byte extended timestamp. Which fields a header inherits is the business of ChunkReader and
// ChunkWriter, which keep the per-csid state; this file only knows byte layouts.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace sluice::protocol {

// The chunk size each direction starts with, until a Set Chunk Size message changes it.
inline constexpr uint32_t kDefaultChunkSize = 128;
// The largest chunk header: 3 basic + 11 message + 4 extended timestamp.
inline constexpr size_t kMaxChunkHeaderSize = 18;
// The largest valid chunk size (bit 31 must be zero).
inline constexpr uint32_t kMaxChunkSizeValue = 0x7FFFFFFF;
// Chunk stream ids that a basic header can carry (0 and 1 select the 2- and 3-byte forms).
inline constexpr uint32_t kMinCsid = 2;
inline constexpr uint32_t kMaxCsid = 65599;
// A 24-bit timestamp field holding this value means "the real value is in the extended field".
inline constexpr uint32_t kExtendedTimestampMarker = 0xFFFFFF;
// Message length is a 24-bit field.
inline constexpr uint32_t kMaxMessageLength = 0xFFFFFF;

// Chunk header formats (the two high bits of the first byte).
namespace chunk_fmt {
inline constexpr uint8_t kFull = 0;        // 11-byte message header, absolute timestamp
inline constexpr uint8_t kSameStream = 1;  // 7 bytes: delta, length, type
inline constexpr uint8_t kDeltaOnly = 2;   // 3 bytes: delta
inline constexpr uint8_t kNone = 3;        // 0 bytes: everything inherited
}  // namespace chunk_fmt

// One chunk header as it appears on the wire.
struct ChunkHeader {
  uint8_t fmt = 0;
  uint32_t csid = kMinCsid;
  // fmt 0: absolute timestamp; fmt 1/2: timestamp delta; fmt 3: the value of the extended
  // timestamp field when `extended` is set, otherwise unused.
  uint32_t timestamp = 0;
  uint32_t length = 0;     // fmt 0 and 1 only
  uint8_t type = 0;        // fmt 0 and 1 only
  uint32_t stream_id = 0;  // fmt 0 only (little-endian on the wire)
  // Whether a 4-byte extended timestamp follows the message header. For fmt 0-2 the encoder
  // derives it from `timestamp >= 0xFFFFFF`; for fmt 3 it depends on the chunk stream's state,
  // so the caller sets it.
  bool extended = false;

  bool operator==(const ChunkHeader&) const = default;
};

// Size of the basic header that carries `csid` (1, 2 or 3). Precondition: kMinCsid <= csid <= kMaxCsid.
constexpr size_t basic_header_size(uint32_t csid) { return csid < 64 ? 1 : (csid < 320 ? 2 : 3); }
// Size of the basic header that starts with `byte0`.
constexpr size_t basic_header_size_from_byte0(uint8_t byte0) {
  const uint8_t csid6 = byte0 & 0x3F;
  return csid6 == 0 ? 2 : (csid6 == 1 ? 3 : 1);
}
// Size of the message header for `fmt` (0-3).
constexpr size_t message_header_size(uint8_t fmt) {
  constexpr std::array<size_t, 4> kSizes = {11, 7, 3, 0};
  return kSizes[fmt & 3];
}
// Whether a fmt 0-2 header with this timestamp/delta needs the extended field.
constexpr bool needs_extended_timestamp(uint32_t value) { return value >= kExtendedTimestampMarker; }

// Writes the basic header into `out` (room for 3 bytes) and returns its size.
// Precondition: fmt <= 3 and kMinCsid <= csid <= kMaxCsid.
size_t encode_basic_header(uint8_t fmt, uint32_t csid, uint8_t* out);
// Decodes a basic header. Returns the bytes used, or 0 when `in` is too short.
size_t decode_basic_header(std::span<const uint8_t> in, uint8_t& fmt, uint32_t& csid);

// Writes the whole chunk header (basic, message, extended timestamp) into `out`, which has room
// for kMaxChunkHeaderSize bytes, and returns its size.
size_t encode_chunk_header(const ChunkHeader& h, uint8_t* out);
// Appends the encoded header to `out`.
void append_chunk_header(const ChunkHeader& h, std::vector<uint8_t>& out);
// The encoded size of `h`.
size_t chunk_header_size(const ChunkHeader& h);

// Decodes a whole chunk header. `type3_extended` says whether a fmt-3 header carries the
// extended field (state only the caller knows). Returns the bytes used, or 0 when `in` is too
// short. Fields a fmt does not carry are left zero.
size_t decode_chunk_header(std::span<const uint8_t> in, bool type3_extended, ChunkHeader& h);

namespace detail {

// Per-csid state storage shared by the reader and the writer: csids below 64 (the one-byte
// forms, which almost every peer uses) are found by direct index, higher ones by binary search
// in a small sorted vector. Items live in one vector; indexes stay valid, pointers do not
// survive an insert.
template <typename T>
class CsidMap {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;

  uint32_t find(uint32_t csid) const {
    if (csid < kLow) return low_[csid] - 1;  // 0 means absent, so this wraps to kNone
    auto it = lower_bound(csid);
    return (it != high_.end() && it->first == csid) ? it->second : kNone;
  }
  // Adds a default item for a csid that find() reported absent and returns its index.
  uint32_t insert(uint32_t csid) {
    const auto index = static_cast<uint32_t>(items_.size());
    items_.emplace_back();
    if (csid < kLow) {
      low_[csid] = index + 1;
    } else {
      high_.insert(lower_bound(csid), {csid, index});
    }
    return index;
  }
  T& operator[](uint32_t index) { return items_[index]; }
  const T& operator[](uint32_t index) const { return items_[index]; }
  size_t size() const { return items_.size(); }
  std::vector<T>& items() { return items_; }

 private:
  static constexpr uint32_t kLow = 64;
  using HighEntry = std::pair<uint32_t, uint32_t>;  // csid, index into items_

  typename std::vector<HighEntry>::const_iterator lower_bound(uint32_t csid) const {
    size_t lo = 0;
    size_t hi = high_.size();
    while (lo < hi) {
      const size_t mid = (lo + hi) / 2;
      if (high_[mid].first < csid) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return high_.begin() + static_cast<std::ptrdiff_t>(lo);
  }

  std::array<uint32_t, kLow> low_{};  // index + 1, 0 = absent
  std::vector<HighEntry> high_;
  std::vector<T> items_;
};

}  // namespace detail

}  // namespace sluice::protocol
