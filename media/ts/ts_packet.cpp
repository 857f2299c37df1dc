#include "media/ts/ts_packet.hpp"

#include "media/ts/crc32.hpp"
#include "media/ts/ts_format.hpp"

namespace sluice::media::ts {

namespace {
constexpr size_t kMaxSection = 1024;   // section_length 1021 and its 3-byte header
constexpr size_t kMinSection = 12;     // table_id .. last_section_number, CRC_32
constexpr size_t kMaxBuffered = 4096;  // a section still arriving, and what follows it
constexpr uint8_t kTableIdPat = 0x00;
constexpr uint8_t kTableIdPmt = 0x02;
}  // namespace

Result<TsPacket> parse_ts_packet(std::span<const uint8_t> p) {
  if (p.size() != kPacketSize || p[0] != kSyncByte) return Error(Errc::Malformed, "no MPEG-TS sync byte");
  TsPacket t;
  t.transport_error = (p[1] & 0x80) != 0;
  t.unit_start = (p[1] & 0x40) != 0;
  t.pid = static_cast<uint16_t>((p[1] & 0x1F) << 8 | p[2]);
  t.scrambled = (p[3] & 0xC0) != 0;
  const uint8_t adaptation_field_control = (p[3] >> 4) & 0x03;
  t.has_payload = (adaptation_field_control & 0x01) != 0;
  t.continuity = p[3] & 0x0F;
  size_t pos = 4;
  if (adaptation_field_control & 0x02) {
    const size_t length = p[4];
    if (5 + length > kPacketSize) return Error(Errc::Malformed, "adaptation field longer than its packet");
    if (length > 0) {
      t.discontinuity = (p[5] & 0x80) != 0;
      t.random_access = (p[5] & 0x40) != 0;
    }
    pos = 5 + length;
  }
  if (t.has_payload) t.payload = p.subspan(pos);
  return t;
}

void SectionReader::feed(const TsPacket& packet, std::vector<std::vector<uint8_t>>& sections) {
  std::span<const uint8_t> data = packet.payload;
  if (packet.unit_start) {
    if (data.empty()) return;
    const size_t pointer = data[0];
    if (1 + pointer > data.size()) {
      buf_.clear();
      open_ = false;
      ++bad_;
      return;
    }
    if (open_) {  // the end of the section before
      buf_.insert(buf_.end(), data.begin() + 1, data.begin() + 1 + static_cast<ptrdiff_t>(pointer));
      take_whole(sections);
    }
    buf_.clear();
    open_ = true;
    data = data.subspan(1 + pointer);
  } else if (!open_) {
    return;  // the middle of a section whose start was not seen
  }
  if (buf_.size() + data.size() > kMaxBuffered) {
    buf_.clear();
    open_ = false;
    ++bad_;
    return;
  }
  buf_.insert(buf_.end(), data.begin(), data.end());
  take_whole(sections);
}

void SectionReader::take_whole(std::vector<std::vector<uint8_t>>& sections) {
  size_t pos = 0;
  while (open_ && buf_.size() - pos >= 3) {
    if (buf_[pos] == 0xFF) {  // stuffing: nothing more in this packet
      open_ = false;
      pos = buf_.size();
      break;
    }
    const size_t length = 3 + (size_t(buf_[pos + 1] & 0x0F) << 8 | buf_[pos + 2]);
    if (length > kMaxSection || length < kMinSection) {
      ++bad_;
      open_ = false;
      pos = buf_.size();
      break;
    }
    if (buf_.size() - pos < length) break;
    const std::span<const uint8_t> section(buf_.data() + pos, length);
    if (crc32_mpeg2(section) == 0) {
      sections.emplace_back(section.begin(), section.end());
    } else {
      ++bad_;
    }
    pos += length;
  }
  buf_.erase(buf_.begin(), buf_.begin() + static_cast<ptrdiff_t>(pos));
}

std::optional<uint16_t> parse_pat(std::span<const uint8_t> s) {
  if (s.size() < kMinSection || s[0] != kTableIdPat || (s[5] & 0x01) == 0) return std::nullopt;
  const size_t end = s.size() - 4;  // CRC_32
  for (size_t i = 8; i + 4 <= end; i += 4) {
    const uint16_t program = static_cast<uint16_t>(s[i] << 8 | s[i + 1]);
    if (program != 0) return static_cast<uint16_t>((s[i + 2] & 0x1F) << 8 | s[i + 3]);
  }
  return std::nullopt;
}

std::optional<ProgramMap> parse_pmt(std::span<const uint8_t> s) {
  if (s.size() < kMinSection + 4 || s[0] != kTableIdPmt || (s[5] & 0x01) == 0) return std::nullopt;
  ProgramMap m;
  m.pcr_pid = static_cast<uint16_t>((s[8] & 0x1F) << 8 | s[9]);
  const size_t program_info = size_t(s[10] & 0x0F) << 8 | s[11];
  const size_t end = s.size() - 4;
  size_t i = 12 + program_info;
  if (i > end) return std::nullopt;
  while (i + 5 <= end) {
    ProgramMap::Stream stream{s[i], static_cast<uint16_t>((s[i + 1] & 0x1F) << 8 | s[i + 2])};
    const size_t es_info = size_t(s[i + 3] & 0x0F) << 8 | s[i + 4];
    i += 5 + es_info;
    if (i > end) return std::nullopt;
    if (m.streams.size() < kMaxPmtStreams) m.streams.push_back(stream);
  }
  return m;
}

}  // namespace sluice::media::ts
