// A small, bounds-checked reader of what media/fmp4/fmp4_writer writes, for the unit tests and
// tests/fuzz/fmp4_writer_fuzz.cpp: boxes, the init segment's tracks (ids, timescales, sample entry
// and its avcC/hvcC payload or esds DecoderSpecificInfo, trex defaults) and a fragment's samples
// (decode time from tfdt plus durations, composition offset, size, flags and bytes found in the
// mdat through the trun data_offset). It is written from ISO/IEC 14496-12 independently of the
// writer (no shared constants), and each function returns an error message ("" when fine) instead
// of throwing, so the fuzz target can abort on it. Header-only; no doctest here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/byte_io.hpp"

namespace sluice::media::fmp4::test {

using Bytes = std::span<const uint8_t>;

constexpr uint32_t fourcc(std::string_view s) {
  return s.size() != 4 ? 0
                       : uint32_t(uint8_t(s[0])) << 24 | uint32_t(uint8_t(s[1])) << 16 | uint32_t(uint8_t(s[2])) << 8 |
                             uint32_t(uint8_t(s[3]));
}

inline std::string fourcc_name(uint32_t t) {
  std::string s;
  for (int shift = 24; shift >= 0; shift -= 8) {
    const char c = static_cast<char>(t >> shift);
    s += (c >= 0x20 && c < 0x7F) ? c : '?';
  }
  return s;
}

struct Box {
  uint32_t type = 0;
  Bytes whole;    // header included
  Bytes payload;  // after the header
};

// Splits `data` into boxes that fill it exactly. Errors: a size smaller than its header, a box
// past the end of `data`, size 0 ("to the end": the writer never uses it), trailing bytes.
inline std::string split(Bytes data, std::vector<Box>& out) {
  out.clear();
  size_t pos = 0;
  while (pos < data.size()) {
    ByteReader r(data.subspan(pos));
    uint64_t size = r.u32be();
    const uint32_t type = r.u32be();
    size_t header = 8;
    if (size == 1) {
      size = r.u64be();
      header = 16;
    }
    if (r.failed()) return "box header cut short at " + std::to_string(pos);
    if (size == 0) return "box '" + fourcc_name(type) + "' of size 0";
    if (size < header) return "box '" + fourcc_name(type) + "' smaller than its header";
    if (size > data.size() - pos) return "box '" + fourcc_name(type) + "' past its parent";
    const Bytes whole = data.subspan(pos, static_cast<size_t>(size));
    out.push_back({type, whole, whole.subspan(header)});
    pos += static_cast<size_t>(size);
  }
  return "";
}

inline std::vector<uint32_t> types(const std::vector<Box>& boxes) {
  std::vector<uint32_t> t;
  for (const Box& b : boxes) t.push_back(b.type);
  return t;
}

// The only box of `type` among `boxes`, or nullptr (none, or more than one).
inline const Box* only(const std::vector<Box>& boxes, std::string_view type) {
  const Box* found = nullptr;
  for (const Box& b : boxes) {
    if (b.type != fourcc(type)) continue;
    if (found) return nullptr;
    found = &b;
  }
  return found;
}

// The children of the only `type` box, skipping `skip` payload bytes (a full box header, a
// sample entry's fields).
inline std::string children(const std::vector<Box>& boxes, std::string_view type, std::vector<Box>& out,
                            size_t skip = 0) {
  const Box* b = only(boxes, type);
  if (!b) return "not exactly one '" + std::string(type) + "'";
  if (b->payload.size() < skip) return "'" + std::string(type) + "' too short";
  const std::string e = split(b->payload.subspan(skip), out);
  return e.empty() ? e : std::string(type) + ": " + e;
}

// ---- init segment --------------------------------------------------------------------------

struct Trex {
  uint32_t track_id = 0, description_index = 0, duration = 0, size = 0, flags = 0;
};

struct InitTrack {
  uint32_t id = 0;
  uint32_t timescale = 0;      // mdhd
  uint32_t handler = 0;        // 'vide', 'soun'
  uint32_t entry = 0;          // 'avc1', 'hvc1', 'mp4a'
  std::vector<uint32_t> stbl;  // child types, in order
  bool tables_empty = false;   // stts, stsc, stsz, stco without entries
  // Video: the avcC/hvcC payload; audio: the esds DecoderSpecificInfo (has_specific says if any).
  std::vector<uint8_t> config;
  uint32_t config_box = 0;  // 'avcC', 'hvcC', 'esds'
  bool has_specific = false;
  uint8_t object_type = 0;         // esds objectTypeIndication
  uint16_t width = 0, height = 0;  // visual entry
  uint16_t channels = 0;
  uint32_t sample_rate = 0;  // audio entry, 16.16
};

struct Init {
  std::vector<uint32_t> top, moov;
  uint32_t major = 0, minor = 0;
  std::vector<uint32_t> compatible;
  uint32_t next_track_id = 0;
  std::vector<InitTrack> tracks;
  std::vector<Trex> trex;
};

namespace detail {

// An ISO 14496-1 descriptor: tag, size in up to 4 bytes of 7 bits, body.
inline bool descriptor(ByteReader& r, uint8_t& tag, Bytes& body) {
  tag = r.u8();
  uint32_t size = 0;
  for (int i = 0; i < 4; ++i) {
    const uint8_t b = r.u8();
    size = size << 7 | (b & 0x7F);
    if (!(b & 0x80)) break;
    if (i == 3) return false;
  }
  body = r.bytes(size);
  return !r.failed();
}

inline std::string parse_esds(Bytes payload, InitTrack& t) {
  ByteReader r(payload);
  r.skip(4);  // version, flags
  uint8_t tag = 0;
  Bytes es;
  if (!descriptor(r, tag, es) || tag != 0x03) return "esds: no ES_Descriptor";
  ByteReader e(es);
  e.skip(2);  // ES_ID
  const uint8_t flags = e.u8();
  if (flags & 0x80) e.skip(2);
  if (flags & 0x40) e.skip(e.u8());
  if (flags & 0x20) e.skip(2);
  Bytes dc;
  if (!descriptor(e, tag, dc) || tag != 0x04) return "esds: no DecoderConfigDescriptor";
  ByteReader d(dc);
  t.object_type = d.u8();
  d.skip(12);  // streamType, bufferSizeDB, maxBitrate, avgBitrate
  if (d.failed()) return "esds: DecoderConfigDescriptor too short";
  if (d.empty()) return "";
  Bytes dsi;
  if (!descriptor(d, tag, dsi) || tag != 0x05) return "esds: bad DecoderSpecificInfo";
  t.has_specific = true;
  t.config.assign(dsi.begin(), dsi.end());
  return "";
}

inline std::string parse_stbl(const std::vector<Box>& stbl, InitTrack& t) {
  t.stbl = types(stbl);
  t.tables_empty = true;
  for (std::string_view table : {"stts", "stsc", "stsz", "stco"}) {
    const Box* b = only(stbl, table);
    if (!b) return "not exactly one '" + std::string(table) + "'";
    ByteReader r(b->payload);
    r.skip(4);
    if (table == "stsz") r.u32be();
    if (r.u32be() != 0 || r.failed() || !r.empty()) t.tables_empty = false;
  }
  const Box* stsd = only(stbl, "stsd");
  if (!stsd) return "no stsd";
  ByteReader r(stsd->payload);
  r.skip(4);
  if (r.u32be() != 1) return "stsd entry count is not 1";
  std::vector<Box> entries;
  if (std::string e = split(r.rest(), entries); !e.empty()) return "stsd: " + e;
  if (entries.size() != 1) return "stsd holds " + std::to_string(entries.size()) + " boxes";
  const Box& entry = entries[0];
  t.entry = entry.type;
  const bool audio = entry.type == fourcc("mp4a");
  const size_t fields = audio ? 28 : 78;  // AudioSampleEntry / VisualSampleEntry fixed fields
  if (entry.payload.size() < fields) return "sample entry too short";
  ByteReader f(entry.payload);
  std::vector<Box> inner;
  if (std::string e = split(entry.payload.subspan(fields), inner); !e.empty()) return "sample entry: " + e;
  if (inner.empty()) return "sample entry without a configuration box";
  t.config_box = inner[0].type;
  if (audio) {
    f.skip(16);
    t.channels = f.u16be();
    f.skip(6);
    t.sample_rate = f.u32be();
    if (t.config_box != fourcc("esds")) return "mp4a without esds";
    return parse_esds(inner[0].payload, t);
  }
  f.skip(24);
  t.width = f.u16be();
  t.height = f.u16be();
  t.config.assign(inner[0].payload.begin(), inner[0].payload.end());
  return "";
}

inline std::string parse_trak(const Box& trak, InitTrack& t) {
  std::vector<Box> kids, mdia, minf, stbl;
  if (std::string e = split(trak.payload, kids); !e.empty()) return e;
  const Box* tkhd = only(kids, "tkhd");
  if (!tkhd) return "no tkhd";
  ByteReader h(tkhd->payload);
  const uint8_t version = h.u8();
  h.skip(3 + (version == 1 ? 16 : 8));
  t.id = h.u32be();
  if (h.failed()) return "tkhd too short";
  if (std::string e = children(kids, "mdia", mdia); !e.empty()) return e;
  const Box* mdhd = only(mdia, "mdhd");
  const Box* hdlr = only(mdia, "hdlr");
  if (!mdhd || !hdlr) return "mdia without mdhd or hdlr";
  ByteReader m(mdhd->payload);
  const uint8_t mv = m.u8();
  m.skip(3 + (mv == 1 ? 16 : 8));
  t.timescale = m.u32be();
  ByteReader hd(hdlr->payload);
  hd.skip(8);
  t.handler = hd.u32be();
  if (m.failed() || hd.failed()) return "mdhd or hdlr too short";
  if (std::string e = children(mdia, "minf", minf); !e.empty()) return e;
  if (std::string e = children(minf, "stbl", stbl); !e.empty()) return e;
  return parse_stbl(stbl, t);
}

}  // namespace detail

inline std::string parse_init(Bytes data, Init& out) {
  out = Init{};
  std::vector<Box> top, moov, mvex;
  if (std::string e = split(data, top); !e.empty()) return e;
  out.top = types(top);
  const Box* ftyp = only(top, "ftyp");
  if (!ftyp) return "no ftyp";
  ByteReader f(ftyp->payload);
  out.major = f.u32be();
  out.minor = f.u32be();
  while (f.remaining() >= 4) out.compatible.push_back(f.u32be());
  if (f.failed() || !f.empty()) return "ftyp size";
  if (std::string e = children(top, "moov", moov); !e.empty()) return e;
  out.moov = types(moov);
  const Box* mvhd = only(moov, "mvhd");
  if (!mvhd || mvhd->payload.size() < 4) return "no mvhd";
  const size_t next_at = mvhd->payload[0] == 1 ? 108 : 96;  // next_track_ID, the last field
  if (mvhd->payload.size() != next_at + 4) return "mvhd size";
  out.next_track_id = load_u32be(mvhd->payload.data() + next_at);
  for (const Box& b : moov) {
    if (b.type != fourcc("trak")) continue;
    InitTrack t;
    if (std::string e = detail::parse_trak(b, t); !e.empty()) return "trak: " + e;
    out.tracks.push_back(std::move(t));
  }
  if (std::string e = children(moov, "mvex", mvex); !e.empty()) return e;
  for (const Box& b : mvex) {
    if (b.type != fourcc("trex")) continue;
    if (b.payload.size() != 24) return "trex size";
    ByteReader r(b.payload.subspan(4));
    out.trex.push_back({r.u32be(), r.u32be(), r.u32be(), r.u32be(), r.u32be()});
  }
  return "";
}

// ---- fragments -----------------------------------------------------------------------------

struct FragmentSample {
  uint64_t dts = 0;
  uint32_t duration = 0;
  int64_t cts = 0;
  uint32_t size = 0;
  uint32_t flags = 0;
  size_t offset = 0;  // in the fragment
  Bytes bytes;        // inside the mdat payload
};

struct Traf {
  uint32_t track_id = 0;
  uint32_t tfhd_flags = 0;
  std::vector<uint32_t> boxes;  // child types, in order
  bool has_tfdt = false;
  uint8_t tfdt_version = 0;
  uint64_t base_dts = 0;
  std::vector<FragmentSample> samples;
};

struct Fragment {
  std::vector<uint32_t> top, moof;
  uint32_t sequence = 0;
  std::vector<Traf> trafs;
  size_t mdat_payload_offset = 0, mdat_payload_size = 0;
  const Traf* track(uint32_t id) const {
    for (const Traf& t : trafs) {
      if (t.track_id == id) return &t;
    }
    return nullptr;
  }
};

namespace detail {

// One trun of `t`; `base` is the data offset base (in the fragment), `next` where the data of a
// trun without data_offset starts; both move on past this run's data.
inline std::string parse_trun(Bytes data, Bytes payload, const Fragment& f, uint64_t defaults[3], int64_t base,
                              int64_t& next, Traf& t, uint64_t& dts) {
  ByteReader r(payload);
  const uint8_t version = r.u8();
  const uint32_t flags = r.u24be();
  const uint32_t count = r.u32be();
  int64_t at = (flags & 0x1) ? base + static_cast<int32_t>(r.u32be()) : next;
  const bool first_flags = flags & 0x4;
  const uint32_t first = first_flags ? r.u32be() : 0;
  const size_t entry = 4u * (((flags >> 8) & 1) + ((flags >> 9) & 1) + ((flags >> 10) & 1) + ((flags >> 11) & 1));
  if (r.failed()) return "trun header too short";
  if (entry * uint64_t{count} != r.remaining()) return "trun sample count does not match its size";
  // Without per-sample fields the count is unchecked by the size: bound it (no real run is longer).
  if (entry == 0 && count > (1u << 20)) return "trun sample count too large";
  const int64_t mdat_begin = static_cast<int64_t>(f.mdat_payload_offset);
  const int64_t mdat_end = mdat_begin + static_cast<int64_t>(f.mdat_payload_size);
  for (uint32_t i = 0; i < count; ++i) {
    FragmentSample s;
    s.duration = (flags & 0x100) ? r.u32be() : static_cast<uint32_t>(defaults[0]);
    s.size = (flags & 0x200) ? r.u32be() : static_cast<uint32_t>(defaults[1]);
    s.flags = (flags & 0x400) ? r.u32be() : (i == 0 && first_flags) ? first : static_cast<uint32_t>(defaults[2]);
    if (flags & 0x800) {
      const uint32_t c = r.u32be();
      s.cts = version == 0 ? int64_t{c} : int64_t{static_cast<int32_t>(c)};
    }
    if (at < mdat_begin || at > mdat_end || int64_t{s.size} > mdat_end - at) {
      return "trun data outside the mdat (sample " + std::to_string(i) + ")";
    }
    s.offset = static_cast<size_t>(at);
    s.bytes = data.subspan(s.offset, s.size);
    s.dts = dts;
    dts += s.duration;
    at += s.size;
    t.samples.push_back(s);
  }
  next = at;
  return "";
}

inline std::string parse_traf(Bytes data, const Box& traf, int64_t moof_at, Fragment& f, int64_t& next) {
  Traf t;
  std::vector<Box> kids;
  if (std::string e = split(traf.payload, kids); !e.empty()) return e;
  t.boxes = types(kids);
  const Box* tfhd = only(kids, "tfhd");
  if (!tfhd) return "no tfhd";
  ByteReader h(tfhd->payload);
  h.u8();
  t.tfhd_flags = h.u24be();
  t.track_id = h.u32be();
  int64_t base = moof_at;
  if (t.tfhd_flags & 0x1) base = static_cast<int64_t>(h.u64be() & 0x7FFFFFFFFFFFFFFF);
  if (t.tfhd_flags & 0x2) h.u32be();  // sample_description_index
  uint64_t defaults[3] = {0, 0, 0};   // duration, size, flags
  if (t.tfhd_flags & 0x8) defaults[0] = h.u32be();
  if (t.tfhd_flags & 0x10) defaults[1] = h.u32be();
  if (t.tfhd_flags & 0x20) defaults[2] = h.u32be();
  if (h.failed() || !h.empty()) return "tfhd size does not match its flags";
  // Without a base, a run without data_offset continues where the previous traf's data ended.
  if (!(t.tfhd_flags & 0x1) && !(t.tfhd_flags & 0x020000) && !f.trafs.empty()) base = next;
  next = base;
  if (const Box* tfdt = only(kids, "tfdt")) {
    ByteReader d(tfdt->payload);
    t.tfdt_version = d.u8();
    d.skip(3);
    t.base_dts = t.tfdt_version == 1 ? d.u64be() : d.u32be();
    if (d.failed() || !d.empty()) return "tfdt size";
    t.has_tfdt = true;
  }
  uint64_t dts = t.base_dts;
  for (const Box& b : kids) {
    if (b.type != fourcc("trun")) continue;
    if (std::string e = parse_trun(data, b.payload, f, defaults, base, next, t, dts); !e.empty()) return e;
  }
  f.trafs.push_back(std::move(t));
  return "";
}

}  // namespace detail

// `data` is one fragment: a moof, then an mdat, nothing else.
inline std::string parse_fragment(Bytes data, Fragment& out) {
  out = Fragment{};
  std::vector<Box> top, moof;
  if (std::string e = split(data, top); !e.empty()) return e;
  out.top = types(top);
  if (top.size() != 2 || top[0].type != fourcc("moof") || top[1].type != fourcc("mdat")) return "not moof + mdat";
  out.mdat_payload_offset = static_cast<size_t>(top[1].payload.data() - data.data());
  out.mdat_payload_size = top[1].payload.size();
  if (std::string e = split(top[0].payload, moof); !e.empty()) return "moof: " + e;
  out.moof = types(moof);
  const Box* mfhd = only(moof, "mfhd");
  if (!mfhd || mfhd->payload.size() != 8) return "no mfhd, or a wrong size";
  out.sequence = load_u32be(mfhd->payload.data() + 4);
  int64_t next = static_cast<int64_t>(out.mdat_payload_offset);
  for (const Box& b : moof) {
    if (b.type != fourcc("traf")) continue;
    if (std::string e = detail::parse_traf(data, b, 0, out, next); !e.empty()) return "traf: " + e;
  }
  return "";
}

}  // namespace sluice::media::fmp4::test
