#include "media/ts/ts_muxer.hpp"

#include <algorithm>
#include <array>
#include <cassert>
#include <cstring>
#include <optional>
#include <span>

#include "media/ts/crc32.hpp"

namespace sluice::media::ts {

namespace {

constexpr size_t kHeaderSize = 4;
constexpr size_t kPayloadSize = kPacketSize - kHeaderSize;
constexpr uint8_t kPayloadUnitStart = 0x40;
constexpr uint8_t kPayloadOnly = 0x10;           // adaptation_field_control 01
constexpr uint8_t kAdaptationAndPayload = 0x30;  // adaptation_field_control 11
constexpr uint8_t kRandomAccess = 0x40;          // adaptation field flags
constexpr uint8_t kPcrFlag = 0x10;
constexpr size_t kPcrSize = 6;
constexpr uint8_t kStuffing = 0xFF;

constexpr uint8_t kTablePat = 0x00;
constexpr uint8_t kTablePmt = 0x02;
constexpr size_t kMaxSection = 64;  // a PMT of two streams is 31 bytes

constexpr size_t kMaxPesHeader = 19;         // start code, id, length, flags, PTS, DTS
constexpr size_t kPesLengthCovers = 6;       // PES_packet_length counts the bytes after its own field
constexpr uint8_t kPesMarkerAligned = 0x84;  // '10', not scrambled, data_alignment_indicator
constexpr uint8_t kPtsOnly = 0x80;
constexpr uint8_t kPtsAndDts = 0xC0;
constexpr uint32_t kMaxPesLength = 0xFFFF;

bool is_video(hls::Codec c) { return c == hls::Codec::Avc || c == hls::Codec::Hevc; }

// PTS or DTS: a 4-bit prefix and 33 bits in three pieces, each closed by a marker bit.
void put_timestamp(uint8_t* p, uint8_t prefix, uint64_t t) {
  p[0] = static_cast<uint8_t>(prefix << 4 | (t >> 29 & 0x0E) | 1);
  p[1] = static_cast<uint8_t>(t >> 22);
  p[2] = static_cast<uint8_t>((t >> 14 & 0xFE) | 1);
  p[3] = static_cast<uint8_t>(t >> 7);
  p[4] = static_cast<uint8_t>((t << 1 & 0xFE) | 1);
}

// program_clock_reference_base (33 bits), 6 reserved bits, extension (9 bits) = 0.
void put_pcr(uint8_t* p, uint64_t base) {
  p[0] = static_cast<uint8_t>(base >> 25);
  p[1] = static_cast<uint8_t>(base >> 17);
  p[2] = static_cast<uint8_t>(base >> 9);
  p[3] = static_cast<uint8_t>(base >> 1);
  p[4] = static_cast<uint8_t>((base & 1) << 7 | 0x7E);
  p[5] = 0;
}

struct PesHeader {
  std::array<uint8_t, kMaxPesHeader> bytes{};
  size_t size = 0;
  std::span<const uint8_t> span() const { return std::span(bytes).first(size); }
};

// `es_size` bytes of elementary stream follow. Returns nullopt when PES_packet_length cannot hold
// them and the stream may not say 0 (audio).
std::optional<PesHeader> pes_header(uint8_t stream_id, uint64_t pts, uint64_t dts, size_t es_size) {
  PesHeader h;
  uint8_t* p = h.bytes.data();
  const bool with_dts = pts != dts;
  const uint8_t data_length = with_dts ? 10 : 5;
  h.size = 9 + data_length;
  const size_t length = h.size - kPesLengthCovers + es_size;
  if (length > kMaxPesLength && stream_id != kVideoStreamId) return std::nullopt;
  const uint32_t field = length > kMaxPesLength ? 0 : static_cast<uint32_t>(length);
  p[0] = 0;
  p[1] = 0;
  p[2] = 1;
  p[3] = stream_id;
  p[4] = static_cast<uint8_t>(field >> 8);
  p[5] = static_cast<uint8_t>(field);
  p[6] = kPesMarkerAligned;
  p[7] = with_dts ? kPtsAndDts : kPtsOnly;
  p[8] = data_length;
  put_timestamp(p + 9, with_dts ? 0x3 : 0x2, pts);
  if (with_dts) put_timestamp(p + 14, 0x1, dts);
  return h;
}

// Cuts `total` bytes of PES into packets as they are appended: the first packet carries
// payload_unit_start and the optional PCR / random access flag, and the packet where the PES ends
// is completed with adaptation field stuffing (rule 6).
class PacketWriter {
 public:
  PacketWriter(std::vector<uint8_t>& out, uint16_t pid, uint8_t& cc, size_t total, std::optional<uint64_t> pcr,
               bool random_access)
      : out_(out), pid_(pid), cc_(cc), remaining_(total), pcr_(pcr), random_access_(random_access) {}

  ~PacketWriter() { assert(remaining_ == 0 && room_ == 0); }
  PacketWriter(const PacketWriter&) = delete;
  PacketWriter& operator=(const PacketWriter&) = delete;

  void append(std::span<const uint8_t> bytes) {
    while (!bytes.empty() && (room_ > 0 || remaining_ > 0)) {
      if (room_ == 0) start_packet();
      const size_t n = std::min(room_, bytes.size());
      std::memcpy(out_.data() + pos_, bytes.data(), n);
      pos_ += n;
      room_ -= n;
      bytes = bytes.subspan(n);
    }
  }

 private:
  void start_packet() {
    const bool first = first_;
    first_ = false;
    std::array<uint8_t, kPayloadSize> af{};  // adaptation field, length byte first
    size_t af_size = 0;
    uint8_t flags = 0;
    if (first && random_access_) flags |= kRandomAccess;
    if (first && pcr_) flags |= kPcrFlag;
    if (flags != 0) {
      af[1] = flags;
      af_size = 2;
      if (pcr_ && first) {
        put_pcr(af.data() + 2, *pcr_ & kTimestampMask);
        af_size += kPcrSize;
      }
    }
    size_t room = kPayloadSize - af_size;
    if (remaining_ < room) {
      // Stuffing: an adaptation field of one byte is just its length (0); past that it needs the
      // flags byte before the 0xFF bytes.
      if (af_size == 0) {
        af_size = 1;
        if (room - remaining_ >= 2) af[af_size++] = 0;  // no flags
      }
      while (af_size < kPayloadSize - remaining_) af[af_size++] = kStuffing;
      room = remaining_;
    }
    if (af_size > 0) af[0] = static_cast<uint8_t>(af_size - 1);

    const size_t base = out_.size();
    out_.resize(base + kPacketSize);
    uint8_t* p = out_.data() + base;
    p[0] = kSyncByte;
    p[1] = static_cast<uint8_t>((first ? kPayloadUnitStart : 0) | (pid_ >> 8 & 0x1F));
    p[2] = static_cast<uint8_t>(pid_);
    p[3] = static_cast<uint8_t>((af_size > 0 ? kAdaptationAndPayload : kPayloadOnly) | cc_);
    cc_ = (cc_ + 1) & 0x0F;
    std::memcpy(p + kHeaderSize, af.data(), af_size);
    pos_ = base + kHeaderSize + af_size;
    room_ = room;
    remaining_ -= room;
  }

  std::vector<uint8_t>& out_;
  uint16_t pid_;
  uint8_t& cc_;
  size_t remaining_;  // PES bytes not yet given a place in a packet
  size_t room_ = 0;   // payload bytes left in the current packet
  size_t pos_ = 0;    // where the next payload byte goes in out_
  std::optional<uint64_t> pcr_;
  bool random_access_;
  bool first_ = true;
};

// A PSI section (table_id .. CRC_32) in one packet: pointer_field 0, the rest 0xFF.
void write_section_packet(std::vector<uint8_t>& out, uint16_t pid, uint8_t& cc, std::span<const uint8_t> section) {
  const size_t base = out.size();
  out.resize(base + kPacketSize, kStuffing);
  uint8_t* p = out.data() + base;
  p[0] = kSyncByte;
  p[1] = static_cast<uint8_t>(kPayloadUnitStart | (pid >> 8 & 0x1F));
  p[2] = static_cast<uint8_t>(pid);
  p[3] = static_cast<uint8_t>(kPayloadOnly | cc);
  cc = (cc + 1) & 0x0F;
  p[4] = 0;  // pointer_field
  std::memcpy(p + 5, section.data(), section.size());
}

// Builds a long-form section: the caller writes from table_id_extension on, finish() fills in
// section_length and appends the CRC_32.
class Section {
 public:
  explicit Section(uint8_t table_id) { bytes_[0] = table_id; }
  void u8(uint8_t v) { bytes_[size_++] = v; }
  void u16(uint16_t v) {
    u8(static_cast<uint8_t>(v >> 8));
    u8(static_cast<uint8_t>(v));
  }
  std::span<const uint8_t> finish() {
    const size_t length = size_ - 3 + 4;                   // after the section_length field, with the CRC
    bytes_[1] = static_cast<uint8_t>(0xB0 | length >> 8);  // section_syntax_indicator, '0', reserved
    bytes_[2] = static_cast<uint8_t>(length);
    const uint32_t crc = crc32_mpeg2(std::span(bytes_).first(size_));
    for (int shift = 24; shift >= 0; shift -= 8) u8(static_cast<uint8_t>(crc >> shift));
    return std::span(bytes_).first(size_);
  }

 private:
  std::array<uint8_t, kMaxSection> bytes_{};
  size_t size_ = 3;
};

// table_id_extension, then version 0, current_next_indicator 1, section 0 of 0.
void section_head(Section& s, uint16_t extension) {
  s.u16(extension);
  s.u8(0xC1);
  s.u8(0);
  s.u8(0);
}

}  // namespace

TsMuxer::TsMuxer(const hls::StreamSetup& setup)
    : video_codec_(is_video(setup.video.codec) ? setup.video.codec : hls::Codec::None),
      audio_codec_(setup.audio.codec == hls::Codec::Aac ? hls::Codec::Aac : hls::Codec::None),
      annexb_(video_codec_, setup.video.config),
      adts_(adts_config(setup.audio)),
      pcr_pid_(video_codec_ != hls::Codec::None   ? kVideoPid
               : audio_codec_ != hls::Codec::None ? kAudioPid
                                                  : kNoPcrPid) {}

void TsMuxer::write_tables(std::vector<uint8_t>& out) {
  Section pat(kTablePat);
  section_head(pat, kTransportStreamId);
  pat.u16(kProgramNumber);
  pat.u16(0xE000 | kPmtPid);
  write_section_packet(out, kPatPid, pat_cc_, pat.finish());

  Section pmt(kTablePmt);
  section_head(pmt, kProgramNumber);
  pmt.u16(0xE000 | pcr_pid_);
  pmt.u16(0xF000);  // program_info_length 0
  auto stream = [&](uint8_t type, uint16_t pid) {
    pmt.u8(type);
    pmt.u16(0xE000 | pid);
    pmt.u16(0xF000);  // ES_info_length 0
  };
  if (video_codec_ != hls::Codec::None) {
    stream(video_codec_ == hls::Codec::Hevc ? kStreamTypeHevc : kStreamTypeH264, kVideoPid);
  }
  if (audio_codec_ != hls::Codec::None) stream(kStreamTypeAdtsAac, kAudioPid);
  write_section_packet(out, kPmtPid, pmt_cc_, pmt.finish());
}

void TsMuxer::write_sample(const hls::Sample& s, std::vector<uint8_t>& out) {
  if (s.video) {
    write_video(s, out);
  } else {
    write_audio(s, out);
  }
}

void TsMuxer::write_video(const hls::Sample& s, std::vector<uint8_t>& out) {
  if (video_codec_ == hls::Codec::None) return;
  const AnnexB::Plan plan = annexb_.plan(s.data, s.keyframe);
  if (plan.nal_units == 0) return;  // rule 7
  const uint64_t dts = s.dts & kTimestampMask;
  // Unsigned wrap-around makes a negative cts work too.
  const uint64_t pts = (s.dts + static_cast<uint64_t>(int64_t{s.cts})) & kTimestampMask;
  const auto header = pes_header(kVideoStreamId, pts, dts, plan.size);
  if (!header) return;
  const bool pcr = pcr_pid_ == kVideoPid;
  PacketWriter w(out, kVideoPid, video_cc_, header->size + plan.size, pcr ? std::optional(dts) : std::nullopt,
                 s.keyframe);
  w.append(header->span());
  annexb_.write(plan, s.data, [&](std::span<const uint8_t> piece) { w.append(piece); });
}

void TsMuxer::write_audio(const hls::Sample& s, std::vector<uint8_t>& out) {
  if (audio_codec_ == hls::Codec::None || s.data.empty()) return;
  const bool adts = starts_with_adts(s.data);
  if (!adts && s.data.size() > kMaxAdtsPayload) return;  // rule 7, adts.hpp rule 5
  const size_t es_size = s.data.size() + (adts ? 0 : kAdtsHeaderSize);
  const uint64_t pts = s.dts & kTimestampMask;
  const auto header = pes_header(kAudioStreamId, pts, pts, es_size);
  if (!header) return;
  const bool pcr = pcr_pid_ == kAudioPid;
  PacketWriter w(out, kAudioPid, audio_cc_, header->size + es_size, pcr ? std::optional(pts) : std::nullopt, true);
  w.append(header->span());
  if (!adts) w.append(adts_header(adts_, s.data.size()));
  w.append(s.data);
}

}  // namespace sluice::media::ts
