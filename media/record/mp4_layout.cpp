#include "media/record/mp4_layout.hpp"

#include <algorithm>
#include <limits>
#include <utility>

#include "media/codec/aac.hpp"
#include "media/codec/avc.hpp"
#include "media/codec/hevc.hpp"
#include "media/mp4/box_reader.hpp"
#include "media/mp4/box_writer.hpp"

namespace sluice::media::record {

using namespace mp4;  // the boxes and sample tables it writes

namespace {

constexpr uint8_t kObjectAac = 0x40;  // esds objectTypeIndication: MPEG-4 audio

uint32_t clamp32(uint64_t v) {
  return static_cast<uint32_t>(std::min<uint64_t>(v, std::numeric_limits<uint32_t>::max()));
}

}  // namespace

Mp4Builder::Mp4Builder(const vod::MediaIndex& index, uint32_t max_samples)
    : max_samples_(std::min(max_samples, vod::kMaxFlvSamples)), index_width_(index.width), index_height_(index.height) {
  audio_.audio = true;
  copy_.reserve(index.samples.size());  // an upper bound: script tags and sequence headers are in it
  // The initial sequence headers are configurations at time 0, ahead of every sample (rule 3).
  const auto initial = [&](Track& t, uint8_t type, const std::vector<uint8_t>& body) {
    if (body.empty()) return;
    const auto size = static_cast<uint32_t>(body.size());
    const FlvTagHead p = read_flv_tag_head(type, std::span(body).first(std::min(body.size(), kFlvTagHeadBytes)), size);
    if (p.kind != FlvPacketKind::Config) return;
    Sample s;
    s.type = type;
    s.size = size;
    s.sequence_header = true;
    on_config(t, s, p, body);
  };
  initial(video_, kSampleVideo, index.video_sequence_header);
  initial(audio_, kSampleAudio, index.audio_sequence_header);
}

uint32_t Mp4Builder::head_bytes(const Sample& s) {
  if (s.type != kSampleVideo && s.type != kSampleAudio) return 0;
  // A sequence header is compared whole with the track's (rule 3); the index keeps none larger.
  const uint32_t want = s.sequence_header ? vod::kMaxFlvSequenceHeaderBytes : static_cast<uint32_t>(kFlvTagHeadBytes);
  return std::min(s.size, want);
}

Error Mp4Builder::fail(Error e) {
  failed_ = true;
  error_ = e;
  return e;
}

Result<void> Mp4Builder::add(const Sample& s, std::span<const uint8_t> head) {
  if (failed_) return error_;
  if (finished_) return fail(Error(Errc::BadState, "MP4 builder used after finish()"));
  if (s.type != kSampleVideo && s.type != kSampleAudio) return ok();
  const uint32_t need = head_bytes(s);
  if (head.size() < need) {
    return fail(Error(Errc::BadState, "sample at byte " + std::to_string(s.file_offset) + ": " +
                                          std::to_string(head.size()) + " bytes of its body given, " +
                                          std::to_string(need) + " needed"));
  }
  head = head.first(std::min<size_t>(head.size(), s.size));
  Track& t = s.type == kSampleVideo ? video_ : audio_;
  const FlvTagHead p = read_flv_tag_head(s.type, head.first(std::min(head.size(), kFlvTagHeadBytes)), s.size);
  switch (p.kind) {
    case FlvPacketKind::NoMedia: return ok();
    case FlvPacketKind::Unusable:
      seen_frame_ = true;
      ++t.unusable;
      return ok();
    case FlvPacketKind::Config: on_config(t, s, p, head); return ok();
    case FlvPacketKind::Frame: break;
  }
  auto added = on_frame(t, s, p, head);
  if (!added) return fail(std::move(added).error());
  return ok();
}

void Mp4Builder::on_config(Track& t, const Sample& s, const FlvTagHead& p, std::span<const uint8_t> body) {
  // Only a whole body can be compared or kept; a cut one counts as a different configuration.
  const bool complete = body.size() >= s.size && body.size() >= p.prefix;
  const auto record = complete ? body.subspan(p.prefix) : std::span<const uint8_t>();
  switch (t.state) {
    case State::Empty:
    case State::WaitingConfig:
      if (p.codec == Mp4Codec::None) {
        t.state = State::Unsupported;
        t.codec_name = flv_tag_codec_name(s.type, p);
        return;
      }
      t.codec = p.codec;
      t.state = complete && adopt_config(t, p.codec, record) ? State::Active : State::WaitingConfig;
      return;
    case State::Active:
      if (p.codec == t.codec && complete && std::ranges::equal(record, t.config)) return;  // sent again
      stop(t, s.dts_ms, p.codec == t.codec ? "the sequence header changed" : "the codec changed");
      return;
    case State::Stopped:
    case State::Unsupported: return;
  }
}

bool Mp4Builder::adopt_config(Track& t, Mp4Codec codec, std::span<const uint8_t> record) {
  switch (codec) {
    case Mp4Codec::Avc:
    case Mp4Codec::Hevc: {
      // Copied as the publisher sent it, as ffmpeg does; an SPS we cannot read only costs the size.
      uint32_t w = 0, h = 0;
      if (codec == Mp4Codec::Avc) {
        if (auto c = parse_avc_config(record)) w = c->width, h = c->height;
      } else if (auto c = parse_hevc_config(record)) {
        w = c->width, h = c->height;
      }
      t.width = w && h ? w : index_width_;
      t.height = w && h ? h : index_height_;
      break;
    }
    case Mp4Codec::Aac: {
      auto c = parse_aac_config(record);
      if (!c) return false;  // no player could decode the frames: wait for a usable one
      t.sample_rate = c->sample_rate;
      t.channels = c->channels;
      t.object_type = kObjectAac;
      break;
    }
    case Mp4Codec::Mp3:
    case Mp4Codec::None: return false;
  }
  t.config.assign(record.begin(), record.end());
  return true;
}

void Mp4Builder::stop(Track& t, uint32_t at_ms, std::string reason) {
  t.state = State::Stopped;
  t.stopped_at_ms = at_ms;
  t.stop_reason = std::move(reason);
}

Result<void> Mp4Builder::on_frame(Track& t, const Sample& s, const FlvTagHead& p, std::span<const uint8_t> head) {
  seen_frame_ = true;
  switch (t.state) {
    case State::Empty:
      if (p.codec == Mp4Codec::None) {
        t.state = State::Unsupported;
        t.codec_name = flv_tag_codec_name(s.type, p);
        ++t.unsupported;
        return ok();
      }
      t.codec = p.codec;
      if (p.codec != Mp4Codec::Mp3) {
        t.state = State::WaitingConfig;
        ++t.before_config;
        return ok();
      }
      {
        // MP3 needs no configuration: the first frame's header describes the track.
        const Mp3Setup m = mp3_setup(head, p);
        t.object_type = m.object_type;
        t.sample_rate = m.sample_rate;
        t.channels = m.channels;
        t.state = State::Active;
      }
      break;
    case State::WaitingConfig: ++t.before_config; return ok();
    case State::Active:
      if (p.codec != t.codec) {
        stop(t, s.dts_ms, "the codec changed");
        ++t.after_stop;
        return ok();
      }
      break;
    case State::Stopped: ++t.after_stop; return ok();
    case State::Unsupported: ++t.unsupported; return ok();
  }
  if (video_.table.count() + audio_.table.count() >= max_samples_) {
    return Error(Errc::LimitExceeded, "more than " + std::to_string(max_samples_) + " samples for an MP4");
  }
  const uint32_t size = s.size - p.prefix;
  t.table.add(mdat_payload_, size, s.dts_ms, t.audio ? 0 : s.cts_ms, t.audio || s.keyframe);
  copy_.push_back({s.file_offset + p.prefix, size});
  mdat_payload_ += size;
  return ok();
}

void Mp4Builder::note(const Track& t, Mp4Layout& layout) const {
  const std::string kind = t.audio ? "audio: " : "video: ";
  const auto add = [&](uint32_t frames, const std::string& why) {
    if (frames == 0) return;
    layout.left_out += frames;
    layout.notes.push_back(kind + why + " (" + std::to_string(frames) + (frames == 1 ? " frame)" : " frames)"));
  };
  if (t.state == State::Unsupported) {
    add(t.unsupported, t.codec_name + " cannot go in an MP4; track left out");
  } else if (t.state == State::WaitingConfig) {
    add(t.before_config, "no usable " + std::string(mp4_codec_name(t.codec)) + " sequence header; track left out");
  } else {
    add(t.before_config, "frames before the first sequence header left out");
  }
  if (t.state == State::Stopped) {
    add(t.after_stop, t.stop_reason + " at " + std::to_string(t.stopped_at_ms) + " ms; the track ends there");
  }
  add(t.unusable, "packets the MP4 copy cannot take (multitrack, ModEx, cut short) left out");
}

Result<Mp4Layout> Mp4Builder::finish() {
  if (failed_) return error_;
  if (finished_) return fail(Error(Errc::BadState, "MP4 builder already finished"));
  finished_ = true;
  video_.table.close();
  audio_.table.close();
  Mp4Layout layout;
  note(video_, layout);
  note(audio_, layout);
  if (video_.table.count() == 0 && audio_.table.count() == 0) {
    if (!seen_frame_) return fail(Error(Errc::Malformed, "the FLV has no audio or video frame"));
    std::string why = "no H.264/HEVC video or AAC/MP3 audio to put in an MP4";
    for (const std::string& n : layout.notes) why += "; " + n;
    return fail(Error(Errc::Unsupported, why));
  }
  // 32-bit chunk offsets until the head itself pushes a track's last chunk past 4 GiB (rule 5);
  // co64 makes the head larger, which only moves chunks further, so this settles in two rounds.
  bool co64[2] = {false, false};
  const Mp4SampleTable* tables[2] = {&video_.table, &audio_.table};
  std::vector<ChunkOffsetTable> offsets;
  for (;;) {
    layout.head.clear();
    offsets.clear();
    write_head(layout.head, co64, offsets);
    bool changed = false;
    for (int i = 0; i < 2; ++i) {
      if (!co64[i] && tables[i]->count() > 0 &&
          layout.head.size() + tables[i]->last_chunk() > std::numeric_limits<uint32_t>::max()) {
        co64[i] = changed = true;
      }
    }
    if (!changed) break;
  }
  for (const ChunkOffsetTable& t : offsets) rebase_chunk_offsets(layout.head, t, layout.head.size());
  layout.copy = std::move(copy_);
  layout.final_size = layout.head.size() + mdat_payload_;
  layout.video_samples = video_.table.count();
  layout.audio_samples = audio_.table.count();
  layout.duration_ms = clamp32(movie_duration());
  return layout;
}

uint32_t Mp4Builder::movie_start() const {
  const bool video = video_.table.count() > 0, audio = audio_.table.count() > 0;
  if (video && audio) return std::min(video_.table.first_dts(), audio_.table.first_dts());
  return video ? video_.table.first_dts() : audio ? audio_.table.first_dts() : 0;
}

uint64_t Mp4Builder::movie_duration() const {
  uint64_t end = 0;
  for (const Mp4SampleTable* t : {&video_.table, &audio_.table}) {
    if (t->count() > 0) end = std::max(end, uint64_t{t->first_dts()} + t->duration());
  }
  return end - movie_start();
}

void Mp4Builder::write_head(std::vector<uint8_t>& out, const bool co64[2],
                            std::vector<ChunkOffsetTable>& tables) const {
  BoxWriter b(out);
  write_ftyp(b);
  {
    BoxScope moov(b, box_type("moov"));
    const bool video = video_.table.count() > 0;
    const bool audio = audio_.table.count() > 0;
    write_mvhd(b, movie_duration(), 1 + video + audio);
    uint32_t id = 1;
    if (video) tables.push_back(write_track(b, video_, id++, co64[0]));
    if (audio) tables.push_back(write_track(b, audio_, id++, co64[1]));
  }
  write_mdat_header(out, mdat_payload_);
}

ChunkOffsetTable Mp4Builder::write_track(BoxWriter& b, const Track& t, uint32_t track_id, bool co64) const {
  const Mp4SampleTable& table = t.table;
  BoxScope trak(b, box_type("trak"));
  const uint64_t delay = table.first_dts() - movie_start();
  write_tkhd(b, track_id, delay + table.duration(), t.audio, t.width, t.height);
  if (delay > 0) write_edts(b, delay, table.duration());
  BoxScope mdia(b, box_type("mdia"));
  write_mdhd(b, table.duration());
  write_hdlr(b, t.audio);
  BoxScope minf(b, box_type("minf"));
  write_media_header_and_dinf(b, t.audio);
  BoxScope stbl(b, box_type("stbl"));
  {
    BoxScope stsd(b, box_type("stsd"), 0, 0);
    b.w().u32be(1);
    if (!t.audio) {
      const bool hevc = t.codec == Mp4Codec::Hevc;
      write_visual_entry(b, hevc ? box_type("hvc1") : box_type("avc1"), hevc ? box_type("hvcC") : box_type("avcC"),
                         t.config, t.width, t.height);
    } else {
      AudioEntry e;
      e.object_type = t.object_type;
      if (t.codec == Mp4Codec::Aac) e.specific = t.config;
      e.sample_rate = t.sample_rate;
      e.channels = t.channels;
      e.track_id = track_id;
      e.buffer_size = table.max_size();
      e.avg_bitrate = table.duration() ? clamp32(table.total_bytes() * 8000 / table.duration()) : 0;
      e.max_bitrate = std::max(e.avg_bitrate, clamp32(table.max_bytes_per_second() * 8));
      write_mp4a_entry(b, e);
    }
  }
  return table.write(b, co64);
}

Result<Mp4Layout> plan_mp4(const vod::MediaIndex& index, std::span<const uint8_t> flv) {
  Mp4Builder builder(index);
  for (const Sample& s : index.samples) {
    const uint32_t n = Mp4Builder::head_bytes(s);
    if (s.file_offset > flv.size() || n > flv.size() - s.file_offset) {
      return Error(Errc::Truncated, "sample at byte " + std::to_string(s.file_offset) + " is outside the FLV");
    }
    auto added = builder.add(s, flv.subspan(static_cast<size_t>(s.file_offset), n));
    if (!added) return std::move(added).error();
  }
  return builder.finish();
}

std::vector<uint8_t> apply_mp4_layout(const Mp4Layout& layout, std::span<const uint8_t> flv) {
  std::vector<uint8_t> out(layout.head);
  out.reserve(layout.final_size);
  for (const ByteRange& r : layout.copy) {
    const auto bytes = flv.subspan(static_cast<size_t>(r.offset), static_cast<size_t>(r.size));
    out.insert(out.end(), bytes.begin(), bytes.end());
  }
  return out;
}

}  // namespace sluice::media::record
