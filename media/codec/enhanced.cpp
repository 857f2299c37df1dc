#include "media/codec/enhanced.hpp"

#include "media/codec/fourcc.hpp"

namespace sluice::media {

Result<uint8_t> read_modex(ByteReader& r, uint32_t& timestamp_offset_nanos) {
  size_t size = size_t{r.u8()} + 1;
  if (size == 256) size = size_t{r.u16be()} + 1;
  const auto data = r.bytes(size);
  const uint8_t next = r.u8();
  if (r.failed()) return Error(Errc::Truncated, "ModEx block");
  if ((next >> 4) == kModExTimestampOffsetNano) {
    if (data.size() < 3) return Error(Errc::Malformed, "ModEx TimestampOffsetNano shorter than 3 bytes");
    const uint32_t nanos = load_u24be(data.data());
    if (nanos > 999'999) return Error(Errc::Malformed, "ModEx TimestampOffsetNano above 999999");
    timestamp_offset_nanos = nanos;
  }
  return static_cast<uint8_t>(next & 0x0F);
}

namespace {

bool carries_nalu_cts(uint32_t code) { return code == fourcc::kAvc1 || code == fourcc::kHvc1 || code == fourcc::kVvc1; }

// Reads the per-track prefix (FourCC, track id, size) and returns where this track's data ends.
Result<size_t> read_track_prefix(ByteReader& r, const TrackLayout& layout, TrackData& t) {
  if (!layout.multitrack) return r.position() + r.remaining();
  if (layout.type == AvMultitrackType::ManyTracksManyCodecs) t.fourcc = r.u32be();
  t.id = r.u8();
  if (layout.type == AvMultitrackType::OneTrack) {
    if (r.failed()) return Error(Errc::Truncated, "multitrack track id");
    return r.position() + r.remaining();
  }
  const uint32_t size = r.u24be();
  if (r.failed()) return Error(Errc::Truncated, "multitrack track header");
  if (size > r.remaining()) return Error(Errc::Malformed, "sizeOfTrack larger than the rest of the message");
  return r.position() + size;
}

Result<void> read_one_track(ByteReader& r, const TrackLayout& layout, TrackList& out) {
  TrackData t;
  t.fourcc = layout.fourcc;
  auto end = read_track_prefix(r, layout, t);
  if (!end) return std::move(end).error();
  if (layout.nalu_cts && carries_nalu_cts(t.fourcc)) {
    if (*end - r.position() < 3) return Error(Errc::Truncated, "composition time");
    t.composition_time = r.s24be();
  }
  t.data_offset = r.position();
  t.data_size = *end - r.position();
  r.skip(t.data_size);
  out.add(t);
  return {};
}

}  // namespace

Result<void> read_tracks(ByteReader& r, const TrackLayout& layout, TrackList& out) {
  const bool many = layout.multitrack && layout.type != AvMultitrackType::OneTrack;
  do {
    auto ok = read_one_track(r, layout, out);
    if (!ok) return std::move(ok).error().wrap("track " + std::to_string(out.total));
  } while (many && !r.empty());
  return {};
}

}  // namespace sluice::media
