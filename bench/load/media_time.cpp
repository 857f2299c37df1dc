#include "bench/load/media_time.hpp"

namespace sluice::bench {

namespace {

uint32_t be32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}
uint64_t be64(const uint8_t* p) { return (uint64_t{be32(p)} << 32) | be32(p + 4); }

bool is_type(const uint8_t* p, const char* type) {
  return p[4] == uint8_t(type[0]) && p[5] == uint8_t(type[1]) && p[6] == uint8_t(type[2]) && p[7] == uint8_t(type[3]);
}

// Calls f(box_start, box_size) for each box of [begin, end) that fits entirely.
template <typename F>
void for_each_box(std::span<const uint8_t> bytes, F&& f) {
  size_t pos = 0;
  while (pos + 8 <= bytes.size()) {
    const uint32_t size = be32(bytes.data() + pos);
    if (size < 8 || pos + size > bytes.size()) return;
    f(bytes.subspan(pos, size));
    pos += size;
  }
}

constexpr size_t kTsPacket = 188;
constexpr uint8_t kTsSync = 0x47;

}  // namespace

std::optional<MediaStart> fmp4_media_start(std::span<const uint8_t> bytes, uint32_t timescale) {
  std::optional<MediaStart> best;
  for_each_box(bytes, [&](std::span<const uint8_t> box) {
    if (!is_type(box.data(), "moof")) return;
    for_each_box(box.subspan(8), [&](std::span<const uint8_t> traf) {
      if (!is_type(traf.data(), "traf")) return;
      uint32_t track = 0;
      std::optional<uint64_t> tfdt;
      for_each_box(traf.subspan(8), [&](std::span<const uint8_t> b) {
        if (is_type(b.data(), "tfhd") && b.size() >= 16) track = be32(b.data() + 12);
        if (is_type(b.data(), "tfdt") && b.size() >= 16) {
          const bool v1 = b[8] == 1;
          if (!v1 || b.size() >= 20) tfdt = v1 ? be64(b.data() + 12) : be32(b.data() + 12);
        }
      });
      if (!tfdt || (best && best->ticks <= *tfdt)) return;
      best = MediaStart{*tfdt, timescale, track == 1};
    });
  });
  return best;
}

std::optional<MediaStart> ts_media_start(std::span<const uint8_t> bytes) {
  std::optional<MediaStart> audio;
  for (size_t pos = 0; pos + kTsPacket <= bytes.size(); pos += kTsPacket) {
    const uint8_t* p = bytes.data() + pos;
    if (p[0] != kTsSync) return std::nullopt;
    const bool unit_start = p[1] & 0x40;
    const uint8_t adaptation = (p[3] >> 4) & 0x3;
    if (!unit_start || !(adaptation & 0x1)) continue;
    size_t off = 4;
    if (adaptation & 0x2) off += 1 + size_t{p[4]};
    if (off + 19 > kTsPacket) continue;  // the PES header with PTS and DTS
    const uint8_t* pes = p + off;
    if (pes[0] != 0 || pes[1] != 0 || pes[2] != 1) continue;  // PSI (PAT, PMT), not a PES
    const uint8_t stream_id = pes[3];
    const bool video = (stream_id & 0xf0) == 0xe0;
    const bool is_audio = (stream_id & 0xe0) == 0xc0;
    const uint8_t flags = pes[7] >> 6;  // 2: PTS, 3: PTS and DTS
    if ((!video && !is_audio) || flags < 2) continue;
    const uint8_t* t = pes + (flags == 3 ? 14 : 9);
    // 33 bits in 5 bytes: 3, 8, 7, 8, 7 bits, each group followed by a marker bit.
    const uint64_t ts = (static_cast<uint64_t>((t[0] >> 1) & 0x7) << 30) | (uint64_t{t[1]} << 22) |
                        (static_cast<uint64_t>(t[2] >> 1) << 15) | (uint64_t{t[3]} << 7) |
                        static_cast<uint64_t>(t[4] >> 1);
    if (video) return MediaStart{ts, 90000, true};
    if (!audio) audio = MediaStart{ts, 90000, false};
  }
  return audio;
}

}  // namespace sluice::bench
