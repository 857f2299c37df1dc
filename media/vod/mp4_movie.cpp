#include "media/vod/mp4_movie.hpp"

#include <algorithm>
#include <optional>

#include "media/mp4/box_reader.hpp"
#include "media/mp4/mp4_track.hpp"
#include "media/vod/metadata_builder.hpp"
#include "media/vod/tag_body.hpp"
#include "base/byte_io.hpp"

namespace sluice::media::vod {

using namespace mp4;  // the boxes, tracks and sample tables it reads

namespace {

struct MovieHeader {
  uint32_t timescale = 0;
  uint64_t duration = 0;
};

struct Movie {
  MovieHeader header;
  std::optional<Mp4Track> video;
  std::optional<Mp4Track> audio;
};

// mvhd: like mdhd, 64-bit times in version 1.
Result<MovieHeader> parse_movie_header(const Box& mvhd) {
  auto f = full_box(mvhd);
  if (!f) return std::move(f).error();
  ByteReader r(f->body);
  r.skip(f->version == 1 ? 16 : 8);
  MovieHeader h;
  h.timescale = r.u32be();
  h.duration = f->version == 1 ? r.u64be() : r.u32be();
  if (r.failed()) return Error(Errc::Truncated, "mvhd");
  // All ones means "unknown" (ISO 14496-12 8.2.2.3).
  if (h.duration == (f->version == 1 ? UINT64_MAX : UINT32_MAX)) h.duration = 0;
  return h;
}

Result<Movie> walk_movie(std::span<const uint8_t> moov_payload, BoxBudget& budget) {
  BoxWalker walker(moov_payload, budget);
  Movie m;
  Box b;
  for (;;) {
    auto more = walker.next(b);
    if (!more) return std::move(more).error();
    if (!*more) break;
    if (b.type == box_type("mvex")) return Error(Errc::Unsupported, "fragmented MP4 is not supported");
    if (b.type == box_type("mvhd")) {
      auto h = parse_movie_header(b);
      if (!h) return std::move(h).error();
      m.header = *h;
    } else if (b.type == box_type("trak") && !(m.video && m.audio)) {
      auto t = parse_track(b, walker, TrackWanted{!m.video, !m.audio});
      if (!t) return std::move(t).error();
      if (*t && (*t)->handler == kHandlerVideo) m.video = std::move(*t);
      if (*t && (*t)->handler == kHandlerAudio) m.audio = std::move(*t);
    }
  }
  if (!m.video && !m.audio) {
    return Error(Errc::Unsupported, "no H.264/HEVC video or AAC/MP3 audio track");
  }
  return m;
}

// The milliseconds added to every time so that the earliest decode time of the movie is 0 when
// edit lists move a track before it (B-frame delay, AAC priming), as FLV timestamps are
// unsigned. ffmpeg's FLV muxer does the same.
Result<int64_t> movie_offset_ms(const Movie& m) {
  int64_t earliest = 0;
  for (const auto* t : {&m.video, &m.audio}) {
    if (!*t) continue;
    int64_t start = 0;
    if (!units_to_ms((*t)->shift(m.header.timescale), (*t)->timescale, start)) {
      return Error(Errc::Malformed, "edit list out of range");
    }
    earliest = std::min(earliest, start);
  }
  return -earliest;
}

Result<std::vector<Sample>> track_samples(const std::optional<Mp4Track>& t, uint8_t type, uint32_t movie_timescale,
                                          int64_t offset_ms, uint64_t file_size, uint32_t max_samples) {
  if (!t) return std::vector<Sample>{};
  TrackTiming timing;
  timing.timescale = t->timescale;
  timing.shift = t->shift(movie_timescale);
  timing.offset_ms = offset_ms;
  auto samples = expand_samples(t->tables, type, timing, file_size, max_samples);
  if (!samples) return std::move(samples).error().wrap(type == kSampleVideo ? "video track" : "audio track");
  return samples;
}

// Decode order (each track already is); at equal times video first (std::merge is stable).
std::vector<Sample> merge(std::vector<Sample> a, std::vector<Sample> b) {
  if (b.empty()) return a;
  if (a.empty()) return b;
  std::vector<Sample> out;
  out.reserve(a.size() + b.size());
  std::merge(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out),
             [](const Sample& x, const Sample& y) { return x.dts_ms < y.dts_ms; });
  return out;
}

void describe_video(const Mp4Track& t, MediaIndex& index) {
  index.has_video = true;
  index.video_codec = t.codec.video_codec;
  index.width = t.codec.width;
  index.height = t.codec.height;
  index.video_sequence_header = t.codec.video_codec == VideoCodec::Hevc ? hevc_sequence_header(t.codec.config)
                                                                        : avc_sequence_header(t.codec.config);
}

void describe_audio(const Mp4Track& t, MediaIndex& index) {
  index.has_audio = true;
  index.audio_codec = t.codec.audio_codec;
  index.audio_sample_rate = t.codec.sample_rate;
  index.audio_channels = t.codec.channels;
  if (t.codec.audio_codec == AudioCodec::Aac) index.audio_sequence_header = aac_sequence_header(t.codec.config);
}

void build_keyframes(MediaIndex& index) {
  for (size_t i = 0; i < index.samples.size(); ++i) {
    const Sample& s = index.samples[i];
    if (s.keyframe) index.keyframes.push_back({static_cast<uint32_t>(i), s.dts_ms});
  }
  index.keyframes.shrink_to_fit();
}

uint32_t movie_duration_ms(const MediaIndex& index, const MovieHeader& h) {
  int64_t declared = 0;
  if (h.timescale != 0 && h.duration <= uint64_t{INT64_MAX}) {
    if (!units_to_ms(static_cast<int64_t>(h.duration), h.timescale, declared)) declared = 0;
  }
  const uint32_t last = index.samples.empty() ? 0 : index.samples.back().dts_ms;
  return static_cast<uint32_t>(std::clamp<int64_t>(declared, last, UINT32_MAX));
}

}  // namespace

Result<MediaIndex> parse_mp4_movie(std::span<const uint8_t> moov_payload, uint64_t file_size, uint32_t max_samples) {
  max_samples = std::min(max_samples, kMaxMp4Samples);
  BoxBudget budget;
  auto movie = walk_movie(moov_payload, budget);
  if (!movie) return std::move(movie).error();
  auto offset_ms = movie_offset_ms(*movie);
  if (!offset_ms) return std::move(offset_ms).error();

  const uint32_t movie_ts = movie->header.timescale;
  auto video = track_samples(movie->video, kSampleVideo, movie_ts, *offset_ms, file_size, max_samples);
  if (!video) return std::move(video).error();
  const auto left = max_samples - static_cast<uint32_t>(video->size());
  auto audio = track_samples(movie->audio, kSampleAudio, movie_ts, *offset_ms, file_size, left);
  if (!audio) return std::move(audio).error();

  MediaIndex index;
  index.container = Container::Mp4;
  index.file_size = file_size;
  // A track whose samples all lie past the end of a truncated file is not played at all.
  if (!video->empty()) describe_video(*movie->video, index);
  if (!audio->empty()) describe_audio(*movie->audio, index);
  if (!index.has_video && !index.has_audio) return Error(Errc::Malformed, "no sample lies inside the file");
  index.samples = merge(std::move(*video), std::move(*audio));
  build_keyframes(index);
  index.duration_ms = movie_duration_ms(index, movie->header);
  index.metadata = build_on_metadata(index);
  return index;
}

}  // namespace sluice::media::vod
