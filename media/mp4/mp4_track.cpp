#include "media/mp4/mp4_track.hpp"

#include <string>

#include "base/byte_io.hpp"

namespace sluice::media::mp4 {

namespace {

constexpr int64_t kEmptyEdit = -1;  // elst media_time of an edit that shows nothing

// hdlr: full box, pre_defined, handler_type.
Result<uint32_t> parse_handler(const Box& hdlr) {
  auto f = full_box(hdlr);
  if (!f) return std::move(f).error();
  ByteReader r(f->body);
  r.skip(4);
  const uint32_t type = r.u32be();
  if (r.failed()) return Error(Errc::Truncated, "hdlr");
  return type;
}

// mdhd: version 1 has 64-bit times; the timescale follows creation and modification times.
Result<uint32_t> parse_media_timescale(const Box& mdhd) {
  auto f = full_box(mdhd);
  if (!f) return std::move(f).error();
  ByteReader r(f->body);
  r.skip(f->version == 1 ? 16 : 8);
  const uint32_t timescale = r.u32be();
  if (r.failed()) return Error(Errc::Truncated, "mdhd");
  if (timescale == 0) return Error(Errc::Malformed, "mdhd timescale 0");
  return timescale;
}

// elst: leading empty edits, then the first real edit's media_time. Anything this basic reading
// does not understand (a negative media_time other than -1, absurd values) leaves the track
// unshifted rather than failing the file.
Result<void> parse_edit_list(const Box& elst, Mp4Track& t) {
  auto f = full_box(elst);
  if (!f) return std::move(f).error();
  ByteReader r(f->body);
  const uint32_t count = r.u32be();
  const size_t entry_size = f->version == 1 ? 20 : 12;
  if (r.failed() || count > r.remaining() / entry_size) return Error(Errc::Malformed, "elst entry count");
  uint64_t empty = 0;
  for (uint32_t i = 0; i < count; ++i) {
    const uint64_t duration = f->version == 1 ? r.u64be() : r.u32be();
    const int64_t media_time =
        f->version == 1 ? static_cast<int64_t>(r.u64be()) : int64_t{static_cast<int32_t>(r.u32be())};
    r.skip(4);  // media_rate
    if (media_time == kEmptyEdit) {
      if (duration > (kMaxEditSeconds << 32) - empty) return ok();
      empty += duration;
      continue;
    }
    if (media_time < 0 || uint64_t(media_time) / t.timescale > kMaxEditSeconds) return ok();
    t.empty_edit = empty;
    t.media_time = media_time;
    return ok();
  }
  t.empty_edit = empty;  // only empty edits: the whole track is delayed
  return ok();
}

// Records the stbl tables; the sample entry is parsed separately (it needs the handler).
void note_table(const Box& b, SampleTables& t) {
  switch (b.type) {
    case box_type("stts"): t.stts = b.payload; break;
    case box_type("ctts"): t.ctts = b.payload, t.has_ctts = true; break;
    case box_type("stsc"): t.stsc = b.payload; break;
    case box_type("stsz"): t.sizes = b.payload, t.compact_sizes = false; break;
    case box_type("stz2"): t.sizes = b.payload, t.compact_sizes = true; break;
    case box_type("stco"): t.offsets = b.payload, t.large_offsets = false; break;
    case box_type("co64"): t.offsets = b.payload, t.large_offsets = true; break;
    case box_type("stss"): t.stss = b.payload, t.has_stss = true; break;
    default: break;
  }
}

// stbl: the sample description and the tables. False when the codec is not one we send.
Result<bool> parse_sample_table(const Box& stbl, const BoxWalker& parent, Mp4Track& t) {
  auto walker = parent.children(stbl);
  if (!walker) return std::move(walker).error();
  Box b;
  bool have_codec = false;
  bool seen_stsd = false;
  for (;;) {
    auto more = walker->next(b);
    if (!more) return std::move(more).error();
    if (!*more) break;
    if (b.type == box_type("stsd") && !seen_stsd) {
      seen_stsd = true;
      auto codec = parse_sample_description(b, *walker, t.handler);
      if (!codec) return std::move(codec).error().wrap("stsd");
      if (*codec) t.codec = **codec, have_codec = true;
    }
    note_table(b, t.tables);
  }
  if (!have_codec) return false;
  const SampleTables& s = t.tables;
  if (s.stts.empty() || s.stsc.empty() || s.sizes.empty() || s.offsets.empty()) {
    return Error(Errc::Malformed, "track lacks one of stts, stsc, stsz, stco");
  }
  return true;
}

// mdia: mdhd, hdlr, minf/stbl.
Result<bool> parse_media(const Box& mdia, const BoxWalker& walker, TrackWanted wanted, Mp4Track& t) {
  auto hdlr = find_child(walker, mdia, box_type("hdlr"));
  if (!hdlr) return std::move(hdlr).error();
  if (!*hdlr) return false;
  auto handler = parse_handler((*hdlr)->box);
  if (!handler) return std::move(handler).error();
  t.handler = *handler;
  if (!(t.handler == kHandlerVideo && wanted.video) && !(t.handler == kHandlerAudio && wanted.audio)) return false;

  auto mdhd = find_child(walker, mdia, box_type("mdhd"));
  if (!mdhd) return std::move(mdhd).error();
  if (!*mdhd) return Error(Errc::Malformed, "track without mdhd");
  auto timescale = parse_media_timescale((*mdhd)->box);
  if (!timescale) return std::move(timescale).error();
  t.timescale = *timescale;

  auto minf = find_child(walker, mdia, box_type("minf"));
  if (!minf) return std::move(minf).error();
  if (!*minf) return Error(Errc::Malformed, "track without minf");
  auto stbl = find_child((*minf)->level, (*minf)->box, box_type("stbl"));
  if (!stbl) return std::move(stbl).error();
  if (!*stbl) return Error(Errc::Malformed, "track without stbl");
  return parse_sample_table((*stbl)->box, (*stbl)->level, t);
}

}  // namespace

int64_t Mp4Track::shift(uint32_t movie_timescale) const {
  int64_t empty_units = 0;
  if (movie_timescale != 0 && empty_edit != 0) {
    // empty_edit * timescale / movie_timescale in two parts so that nothing overflows: the
    // whole seconds are below 2^20 (kMaxEditSeconds), the remainder times a u32 fits 64 bits.
    const uint64_t seconds = empty_edit / movie_timescale;
    const uint64_t rest = empty_edit % movie_timescale;
    if (seconds <= kMaxEditSeconds) {
      empty_units = static_cast<int64_t>(seconds * timescale + rest * timescale / movie_timescale);
    }
  }
  return empty_units - media_time;
}

Result<std::optional<Mp4Track>> parse_track(const Box& trak, const BoxWalker& walker, TrackWanted wanted) {
  auto children = walker.children(trak);
  if (!children) return std::move(children).error();
  Mp4Track t;
  Box b;
  Box elst_box;
  bool have_elst = false;
  bool usable = false;
  for (;;) {
    auto more = children->next(b);
    if (!more) return std::move(more).error();
    if (!*more) break;
    if (b.type == box_type("mdia") && t.timescale == 0) {
      auto media = parse_media(b, *children, wanted, t);
      if (!media) return std::move(media).error().wrap("trak");
      if (!*media) return std::optional<Mp4Track>{};
      usable = true;
    } else if (b.type == box_type("edts") && !have_elst) {
      auto elst = find_child(*children, b, box_type("elst"));
      if (!elst) return std::move(elst).error();
      if (*elst) elst_box = (*elst)->box, have_elst = true;
    }
  }
  if (!usable) return std::optional<Mp4Track>{};
  // The edit list is read last: its media_time check needs the mdhd timescale.
  if (have_elst) {
    auto edits = parse_edit_list(elst_box, t);
    if (!edits) return std::move(edits).error().wrap("elst");
  }
  return std::optional<Mp4Track>{t};
}

}  // namespace sluice::media::mp4
