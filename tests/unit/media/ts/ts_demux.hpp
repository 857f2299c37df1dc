// A small, strict MPEG-TS demuxer for the TsMuxer tests and its fuzz target (ISO/IEC 13818-1):
// it checks what the muxer promises and records every violation as a string in `errors`
// instead of guessing. Header-only, bounds-checked, independent of media/ts/ (its own CRC).
//
// It checks: whole 188-byte packets with sync byte 0x47; continuity counters per PID (payload
// packets count up by one, also across feed() calls); adaptation field lengths, PCR, and 0xFF
// stuffing; PAT and PMT in one section each, with CRC_32; PES on PIDs of the PMT only, after the
// PMT, starting with payload_unit_start; PES_packet_length exact when not 0; PTS/DTS prefixes
// and marker bits. Sections spanning packets are not supported (the muxer never writes them).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace sluice::test::ts {

struct EsUnit {
  uint16_t pid = 0;
  uint8_t stream_type = 0;  // from the PMT
  uint8_t stream_id = 0;
  uint64_t pts = 0;
  uint64_t dts = 0;  // = pts when the PES has no DTS
  bool has_pts = false;
  bool has_dts = false;
  bool random_access = false;  // random_access_indicator of the first packet
  bool has_pcr = false;        // PCR in the first packet
  uint64_t pcr_base = 0;
  uint16_t pcr_ext = 0;
  uint16_t pes_length = 0;  // PES_packet_length field
  size_t packets = 0;
  std::vector<uint8_t> bytes;  // the elementary stream bytes
};

struct PmtStream {
  uint8_t stream_type = 0;
  uint16_t pid = 0;
};

class Demuxer {
 public:
  static constexpr size_t kPacket = 188;

  std::vector<std::string> errors;
  std::vector<EsUnit> units;
  std::map<uint16_t, size_t> packets_per_pid;
  size_t packets = 0;
  size_t pat_count = 0;
  size_t pmt_count = 0;
  uint16_t pmt_pid = 0xFFFF;  // from the PAT
  uint16_t program_number = 0;
  uint16_t transport_stream_id = 0;
  uint16_t pcr_pid = 0xFFFF;  // from the PMT
  std::vector<PmtStream> streams;

  static uint32_t crc32(std::span<const uint8_t> d) {
    uint32_t crc = 0xFFFFFFFFu;
    for (uint8_t b : d) {
      crc ^= uint32_t{b} << 24;
      for (int i = 0; i < 8; ++i) crc = (crc & 0x80000000u) ? (crc << 1) ^ 0x04C11DB7u : crc << 1;
    }
    return crc;
  }

  // `data` must be whole packets (a segment, or the output of some muxer calls).
  void feed(std::span<const uint8_t> data) {
    if (data.size() % kPacket != 0) error("input of " + std::to_string(data.size()) + " bytes is not whole packets");
    for (size_t off = 0; off + kPacket <= data.size(); off += kPacket) packet(data.subspan(off, kPacket));
  }

  // Ends the PES packets still open (unbounded ones end only at the next payload_unit_start).
  void flush() {
    for (auto& [pid, pes] : pes_) {
      if (pes.open) finish_pes(pid, pes);
    }
  }

  const PmtStream* stream(uint16_t pid) const {
    for (const auto& s : streams) {
      if (s.pid == pid) return &s;
    }
    return nullptr;
  }

 private:
  struct Pes {
    bool open = false;
    EsUnit unit;
    std::vector<uint8_t> raw;
  };

  void error(std::string e) {
    if (errors.size() < 100) errors.push_back(std::move(e));
  }

  void packet(std::span<const uint8_t> p) {
    ++packets;
    const std::string at = " at packet " + std::to_string(packets - 1);
    if (p[0] != 0x47) return error("sync byte" + at);
    if (p[1] & 0x80) error("transport_error_indicator" + at);
    const bool start = (p[1] & 0x40) != 0;
    const uint16_t pid = static_cast<uint16_t>((p[1] & 0x1F) << 8 | p[2]);
    if (p[3] & 0xC0) error("scrambled" + at);
    const uint8_t afc = (p[3] >> 4) & 3;
    const uint8_t cc = p[3] & 0x0F;
    ++packets_per_pid[pid];
    if (afc == 0) return error("adaptation_field_control 0" + at);
    const bool has_payload = afc & 1;
    if (has_payload) {
      auto it = cc_.find(pid);
      if (it != cc_.end() && cc != ((it->second + 1) & 0x0F)) {
        error("continuity counter on PID " + std::to_string(pid) + ": " + std::to_string(it->second) + " then " +
              std::to_string(cc) + at);
      }
      cc_[pid] = cc;
    }
    size_t pos = 4;
    bool random_access = false;
    std::optional<std::pair<uint64_t, uint16_t>> pcr;
    if (afc & 2) {
      const size_t len = p[4];
      if (len > 183 || (!has_payload && len != 183)) return error("adaptation_field_length" + at);
      if (has_payload && len == 183) return error("payload packet without payload" + at);
      pos = 5 + len;
      if (len > 0) {
        const uint8_t flags = p[5];
        random_access = flags & 0x40;
        size_t q = 6;
        if (flags & 0x10) {
          if (len < 7) return error("PCR past the adaptation field" + at);
          const uint64_t base =
              uint64_t{p[6]} << 25 | uint64_t{p[7]} << 17 | uint64_t{p[8]} << 9 | uint64_t{p[9]} << 1 | p[10] >> 7;
          if ((p[10] & 0x7E) != 0x7E) error("PCR reserved bits" + at);
          pcr = {base, static_cast<uint16_t>((p[10] & 1) << 8 | p[11])};
          q += 6;
        }
        if ((flags & 0x0F) == 0) {  // no other fields: the rest is stuffing
          for (; q < pos; ++q) {
            if (p[q] != 0xFF) return error("stuffing byte not 0xFF" + at);
          }
        }
      }
    }
    if (!has_payload) return;
    const auto payload = p.subspan(pos);
    if (pid == 0) return psi(payload, start, true, at);
    if (pid == pmt_pid) return psi(payload, start, false, at);
    pes_packet(pid, payload, start, random_access, pcr, at);
  }

  void psi(std::span<const uint8_t> payload, bool start, bool pat, const std::string& at) {
    if (!start) return error("PSI without payload_unit_start (sections across packets)" + at);
    if (payload.empty() || size_t{payload[0]} + 1 > payload.size()) return error("pointer_field" + at);
    const auto rest = payload.subspan(1 + payload[0]);
    if (rest.size() < 3) return error("section header" + at);
    const size_t length = size_t(rest[1] & 0x0F) << 8 | rest[2];
    if ((rest[1] & 0xC0) != 0x80) error("section_syntax_indicator / '0' bit" + at);
    if (3 + length > rest.size()) return error("section runs past the packet" + at);
    if (length < 9) return error("section too short" + at);
    const auto section = rest.first(3 + length);
    if (crc32(section) != 0) return error(std::string(pat ? "PAT" : "PMT") + " CRC" + at);
    for (size_t i = section.size(); i < rest.size(); ++i) {
      if (rest[i] != 0xFF) return error("bytes after the section not 0xFF" + at);
    }
    const uint16_t ext = static_cast<uint16_t>(section[3] << 8 | section[4]);
    if ((section[5] & 0x01) == 0) error("current_next_indicator 0" + at);
    if (section[6] != 0 || section[7] != 0) error("section_number / last_section_number" + at);
    const auto body = section.subspan(8, length - 9);  // up to the CRC
    if (pat) {
      if (section[0] != 0x00) return error("PAT table_id" + at);
      ++pat_count;
      transport_stream_id = ext;
      if (body.size() % 4 != 0) return error("PAT program loop" + at);
      for (size_t i = 0; i + 4 <= body.size(); i += 4) {
        const uint16_t program = static_cast<uint16_t>(body[i] << 8 | body[i + 1]);
        const uint16_t pid = static_cast<uint16_t>((body[i + 2] & 0x1F) << 8 | body[i + 3]);
        if (program != 0) {
          program_number = program;
          pmt_pid = pid;
        }
      }
      return;
    }
    if (section[0] != 0x02) return error("PMT table_id" + at);
    if (ext != program_number) error("PMT program_number" + at);
    if (body.size() < 4) return error("PMT header" + at);
    ++pmt_count;
    pcr_pid = static_cast<uint16_t>((body[0] & 0x1F) << 8 | body[1]);
    const size_t info = size_t(body[2] & 0x0F) << 8 | body[3];
    if (4 + info > body.size()) return error("program_info_length" + at);
    std::vector<PmtStream> found;
    for (size_t i = 4 + info; i < body.size();) {
      if (body.size() - i < 5) return error("PMT stream loop" + at);
      PmtStream s;
      s.stream_type = body[i];
      s.pid = static_cast<uint16_t>((body[i + 1] & 0x1F) << 8 | body[i + 2]);
      const size_t es_info = size_t(body[i + 3] & 0x0F) << 8 | body[i + 4];
      i += 5;
      if (es_info > body.size() - i) return error("ES_info_length" + at);
      i += es_info;
      found.push_back(s);
    }
    streams = std::move(found);
  }

  void pes_packet(uint16_t pid, std::span<const uint8_t> payload, bool start, bool random_access,
                  std::optional<std::pair<uint64_t, uint16_t>> pcr, const std::string& at) {
    Pes& pes = pes_[pid];
    if (start) {
      if (pes.open) finish_pes(pid, pes);
      if (pmt_count == 0) error("PES before the PMT" + at);
      const PmtStream* s = stream(pid);
      if (s == nullptr) error("PES on PID " + std::to_string(pid) + " not in the PMT" + at);
      pes = Pes{};
      pes.open = true;
      pes.unit.pid = pid;
      pes.unit.stream_type = s ? s->stream_type : 0;
      pes.unit.random_access = random_access;
      if (pcr) {
        pes.unit.has_pcr = true;
        pes.unit.pcr_base = pcr->first;
        pes.unit.pcr_ext = pcr->second;
      }
    } else {
      if (!pes.open) return error("payload without a PES start on PID " + std::to_string(pid) + at);
      if (random_access) error("random_access_indicator after the first packet" + at);
      if (pcr) error("PCR after the first packet of a PES" + at);
    }
    ++pes.unit.packets;
    pes.raw.insert(pes.raw.end(), payload.begin(), payload.end());
    if (pes.raw.size() >= 6) {
      const size_t length = size_t{pes.raw[4]} << 8 | pes.raw[5];
      if (length != 0 && pes.raw.size() > 6 + length) error("PES longer than PES_packet_length" + at);
      if (length != 0 && pes.raw.size() >= 6 + length) finish_pes(pid, pes);
    }
  }

  static std::optional<uint64_t> timestamp(std::span<const uint8_t> b, uint8_t prefix) {
    if (b.size() < 5 || (b[0] >> 4) != prefix || !(b[0] & 1) || !(b[2] & 1) || !(b[4] & 1)) return std::nullopt;
    return uint64_t{(b[0] >> 1) & 7u} << 30 | uint64_t{b[1]} << 22 | uint64_t(b[2] >> 1) << 15 | uint64_t{b[3]} << 7 |
           b[4] >> 1;
  }

  void finish_pes(uint16_t pid, Pes& pes) {
    pes.open = false;
    EsUnit u = std::move(pes.unit);
    const std::vector<uint8_t> raw = std::move(pes.raw);
    pes = Pes{};
    const std::string where = " in PES " + std::to_string(units.size()) + " on PID " + std::to_string(pid);
    if (raw.size() < 9 || raw[0] != 0 || raw[1] != 0 || raw[2] != 1) return error("PES start code" + where);
    u.stream_id = raw[3];
    u.pes_length = static_cast<uint16_t>(raw[4] << 8 | raw[5]);
    if (u.pes_length != 0 && raw.size() != 6 + size_t{u.pes_length})
      return error("PES shorter than its length" + where);
    if ((raw[6] & 0xC0) != 0x80) return error("PES header marker bits" + where);
    const uint8_t flags = raw[7] >> 6;
    const size_t header_length = raw[8];
    if (9 + header_length > raw.size()) return error("PES_header_data_length" + where);
    const auto h = std::span(raw).subspan(9, header_length);
    if (flags == 1) return error("PTS_DTS_flags 01" + where);
    if (flags & 2) {
      const auto pts = timestamp(h, flags == 3 ? 3 : 2);
      if (!pts) return error("PTS" + where);
      u.has_pts = true;
      u.pts = u.dts = *pts;
    }
    if (flags == 3) {
      const auto dts = timestamp(h.size() >= 5 ? h.subspan(5) : h, 1);
      if (!dts) return error("DTS" + where);
      u.has_dts = true;
      u.dts = *dts;
    }
    u.bytes.assign(raw.begin() + 9 + static_cast<std::ptrdiff_t>(header_length), raw.end());
    units.push_back(std::move(u));
  }

  std::map<uint16_t, uint8_t> cc_;
  std::map<uint16_t, Pes> pes_;
};

// NAL units of an Annex B stream (3- or 4-byte start codes; the zero bytes before a start code
// are not part of the NAL unit before it).
inline std::vector<std::vector<uint8_t>> split_annexb(std::span<const uint8_t> es) {
  std::vector<size_t> starts;  // first byte after each start code
  for (size_t i = 0; i + 3 <= es.size(); ++i) {
    if (es[i] == 0 && es[i + 1] == 0 && es[i + 2] == 1) starts.push_back(i + 3);
  }
  std::vector<std::vector<uint8_t>> nals;
  for (size_t k = 0; k < starts.size(); ++k) {
    size_t end = k + 1 < starts.size() ? starts[k + 1] - 3 : es.size();
    while (end > starts[k] && es[end - 1] == 0) --end;
    nals.emplace_back(es.begin() + static_cast<std::ptrdiff_t>(starts[k]),
                      es.begin() + static_cast<std::ptrdiff_t>(end));
  }
  return nals;
}

// ADTS header fields (ISO 14496-3 1.A.2.2).
struct Adts {
  bool mpeg2 = false;
  uint8_t layer = 0;
  bool protection_absent = false;
  uint8_t profile = 0;
  uint8_t sampling_index = 0;
  uint8_t channel_config = 0;
  size_t frame_length = 0;  // with the header
  uint16_t buffer_fullness = 0;
  uint8_t raw_blocks = 0;  // number_of_raw_data_blocks_in_frame
};

inline std::optional<Adts> parse_adts(std::span<const uint8_t> b) {
  if (b.size() < 7 || b[0] != 0xFF || (b[1] & 0xF0) != 0xF0) return std::nullopt;
  Adts a;
  a.mpeg2 = b[1] & 0x08;
  a.layer = (b[1] >> 1) & 3;
  a.protection_absent = b[1] & 1;
  a.profile = b[2] >> 6;
  a.sampling_index = (b[2] >> 2) & 0x0F;
  a.channel_config = static_cast<uint8_t>((b[2] & 1) << 2 | b[3] >> 6);
  a.frame_length = size_t(b[3] & 3u) << 11 | size_t{b[4]} << 3 | b[5] >> 5;
  a.buffer_fullness = static_cast<uint16_t>((b[5] & 0x1F) << 6 | b[6] >> 2);
  a.raw_blocks = b[6] & 3;
  return a;
}

}  // namespace sluice::test::ts
