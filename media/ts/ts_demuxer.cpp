#include "media/ts/ts_demuxer.hpp"

#include <algorithm>
#include <string>

#include "media/ts/pes.hpp"
#include "media/ts/ts_format.hpp"

namespace sluice::media::ts {

namespace {

constexpr uint8_t kAudioTag = 8;
constexpr uint8_t kVideoTag = 9;
constexpr uint16_t kNoPid = 0x1FFF;
constexpr int64_t kHeadroomTicks = 90'000;  // rule 3: the first timestamp is 1000 ms
constexpr uint8_t kFlvAacHeader = 0xAF;     // AAC, 44 kHz, 16-bit, stereo (the fields FLV players ignore for AAC)
constexpr uint8_t kFlvMp3Header = 0x2F;     // MP3, 44 kHz, 16-bit, stereo

bool is_video_type(uint8_t t) { return t == kStreamTypeH264 || t == kStreamTypeHevc; }
bool is_audio_type(uint8_t t) {
  return t == kStreamTypeAdtsAac || t == kStreamTypeMpeg1Audio || t == kStreamTypeMpeg2Audio;
}

bool same_adts(const AdtsConfig& a, const AdtsConfig& b) {
  return a.profile == b.profile && a.sampling_index == b.sampling_index && a.channel_config == b.channel_config;
}

}  // namespace

Result<void> TsDemuxer::feed(std::span<const uint8_t> bytes, std::vector<Frame>& out) {
  if (!carry_.empty()) {
    const size_t n = std::min(kPacketSize - carry_.size(), bytes.size());
    carry_.insert(carry_.end(), bytes.begin(), bytes.begin() + static_cast<ptrdiff_t>(n));
    bytes = bytes.subspan(n);
    if (carry_.size() < kPacketSize) return {};
    auto r = packet(carry_, out);
    carry_.clear();
    if (!r) return r;
  }
  for (; bytes.size() >= kPacketSize; bytes = bytes.subspan(kPacketSize)) {
    auto r = packet(bytes.first(kPacketSize), out);
    if (!r) return r;
  }
  carry_.assign(bytes.begin(), bytes.end());
  return {};
}

void TsDemuxer::flush(std::vector<Frame>& out) {
  for (Track* t : {&video_, &audio_}) {
    if (t->collecting && !t->pes.empty()) finish_pes(*t, out);
    t->collecting = false;
    t->pes.clear();
  }
}

Result<void> TsDemuxer::packet(std::span<const uint8_t> bytes, std::vector<Frame>& out) {
  auto p = parse_ts_packet(bytes);
  if (!p) return std::move(p).error().wrap("MPEG-TS packet " + std::to_string(stats_.packets));
  ++stats_.packets;
  if (p->transport_error || p->scrambled) {
    ++stats_.damaged_packets;
    return {};
  }
  if (p->pid == kNoPid) return {};  // null packets: stuffing
  if (p->pid == 0 || p->pid == pmt_pid_) {
    tables(*p, out);
    return {};
  }
  if (p->pid == video_.pid) return track_packet(video_, *p, out);
  if (p->pid == audio_.pid) return track_packet(audio_, *p, out);
  return {};  // rule 1: a PID of no track
}

void TsDemuxer::tables(const TsPacket& p, std::vector<Frame>& out) {
  sections_.clear();
  SectionReader& reader = p.pid == 0 ? pat_reader_ : pmt_reader_;
  reader.feed(p, sections_);
  for (const auto& s : sections_) {
    if (p.pid == 0) {
      auto pmt_pid = parse_pat(s);
      if (pmt_pid && *pmt_pid != pmt_pid_ && *pmt_pid != 0 && *pmt_pid != kNoPid) {
        pmt_pid_ = *pmt_pid;
        pmt_reader_ = SectionReader{};
      }
    } else if (auto pmt = parse_pmt(s)) {
      apply_pmt(*pmt, out);
    }
  }
}

void TsDemuxer::apply_pmt(const ProgramMap& pmt, std::vector<Frame>& out) {
  const ProgramMap::Stream* video = nullptr;
  const ProgramMap::Stream* audio = nullptr;
  for (const auto& s : pmt.streams) {
    if (s.pid == 0 || s.pid == pmt_pid_ || s.pid == kNoPid) continue;
    if (!video && is_video_type(s.type)) video = &s;
    if (!audio && is_audio_type(s.type) && (!video || s.pid != video->pid)) audio = &s;
  }
  auto assign = [&](Track& t, const ProgramMap::Stream* s) {
    const uint16_t pid = s ? s->pid : kNoPid;
    const uint8_t type = s ? s->type : 0;
    if (pid == t.pid && type == t.stream_type) return false;  // a repeated PMT
    if (t.collecting && !t.pes.empty()) finish_pes(t, out);
    t = Track{};
    t.pid = pid;
    t.stream_type = type;
    return true;
  };
  if (assign(video_, video)) {
    packer_.reset();
    if (video) packer_.emplace(video->type == kStreamTypeHevc ? VideoCodec::Hevc : VideoCodec::Avc);
  }
  if (assign(audio_, audio)) adts_.reset();
}

Result<void> TsDemuxer::track_packet(Track& t, const TsPacket& p, std::vector<Frame>& out) {
  if (!p.has_payload) return {};  // adaptation field only: its counter does not count
  if (p.discontinuity) t.last_continuity = -1;
  if (t.last_continuity >= 0) {
    if (p.continuity == t.last_continuity) return {};  // a repeated packet
    if (p.continuity != ((t.last_continuity + 1) & 0x0F)) {
      ++stats_.continuity_errors;
      t.collecting = false;
      t.pes.clear();
    }
  }
  t.last_continuity = p.continuity;
  if (p.unit_start) {
    if (t.collecting && !t.pes.empty()) finish_pes(t, out);
    t.pes.clear();
    t.collecting = true;
    t.expected = 0;
  }
  if (!t.collecting) return {};  // the rest of a PES whose start was lost
  if (t.pes.size() + p.payload.size() > limits_.max_pes_bytes) {
    return Error(Errc::LimitExceeded, "a PES packet on PID " + std::to_string(t.pid) + " longer than " +
                                          std::to_string(limits_.max_pes_bytes) + " bytes");
  }
  t.pes.insert(t.pes.end(), p.payload.begin(), p.payload.end());
  if (t.expected == 0 && t.pes.size() >= 6) {
    const size_t length = size_t(t.pes[4]) << 8 | t.pes[5];
    if (length != 0) t.expected = 6 + length;
  }
  if (t.expected != 0 && t.pes.size() >= t.expected) {
    t.pes.resize(t.expected);  // what follows in the packet is stuffing
    finish_pes(t, out);
    t.collecting = false;
    t.pes.clear();
  }
  return {};
}

void TsDemuxer::finish_pes(Track& t, std::vector<Frame>& out) {
  auto h = parse_pes_header(t.pes);
  if (!h || !h->pts) {
    ++stats_.bad_pes;
    return;
  }
  const std::span<const uint8_t> data = std::span<const uint8_t>(t.pes).subspan(h->payload_offset);
  // The DTS first: the first timestamp seen is the program's 1000 ms (rule 3).
  const int64_t dts = unwrap(h->dts.value_or(*h->pts));
  const int64_t pts = h->dts ? unwrap(*h->pts) : dts;
  if (&t == &video_) return video(data, dts, pts, out);
  if (t.stream_type == kStreamTypeAdtsAac) return aac(data, pts, out);
  if (data.empty()) return;
  Frame f{kAudioTag, ms(pts), {}};
  f.body.reserve(1 + data.size());
  f.body.push_back(kFlvMp3Header);
  f.body.insert(f.body.end(), data.begin(), data.end());
  out.push_back(std::move(f));
}

void TsDemuxer::video(std::span<const uint8_t> data, int64_t dts, int64_t pts, std::vector<Frame>& out) {
  if (!packer_) return;
  const uint32_t timestamp = ms(dts);
  const int32_t cts = static_cast<int32_t>(int64_t{ms(pts)} - int64_t{timestamp});
  bodies_.clear();
  const uint64_t dropped = packer_->dropped();
  packer_->pack(split_annexb(data), cts, bodies_);
  stats_.dropped_frames += packer_->dropped() - dropped;
  for (auto& b : bodies_) out.push_back(Frame{kVideoTag, timestamp, std::move(b.bytes)});
}

void TsDemuxer::aac(std::span<const uint8_t> data, int64_t pts, std::vector<Frame>& out) {
  for (int64_t n = 0; !data.empty(); ++n) {
    auto f = read_adts_frame(data);
    if (!f) {
      ++stats_.dropped_frames;  // the rest of the PES is not ADTS
      return;
    }
    const uint32_t at = ms(pts + n * 1024 * 90'000 / sampling_rate(f->config.sampling_index));
    if (!adts_ || !same_adts(*adts_, f->config)) {
      adts_ = f->config;
      const auto asc = audio_specific_config(f->config);
      out.push_back(Frame{kAudioTag, at, {kFlvAacHeader, 0, asc[0], asc[1]}});
    }
    Frame frame{kAudioTag, at, {}};
    frame.body.reserve(2 + f->frame_size - f->header_size);
    frame.body.push_back(kFlvAacHeader);
    frame.body.push_back(1);  // AACPacketType: raw
    frame.body.insert(frame.body.end(), data.begin() + static_cast<ptrdiff_t>(f->header_size),
                      data.begin() + static_cast<ptrdiff_t>(f->frame_size));
    out.push_back(std::move(frame));
    data = data.subspan(f->frame_size);
  }
}

int64_t TsDemuxer::unwrap(uint64_t ts33) {
  if (!have_clock_) {
    have_clock_ = true;
    last_ = static_cast<int64_t>(ts33 & kTimestampMask);
    base_ = last_ - kHeadroomTicks;
    return last_;
  }
  int64_t diff = static_cast<int64_t>((ts33 - static_cast<uint64_t>(last_)) & kTimestampMask);
  if (diff >= (int64_t{1} << 32)) diff -= int64_t{1} << 33;  // behind the last one
  last_ += diff;
  return last_;
}

uint32_t TsDemuxer::ms(int64_t ticks) const {
  return ticks <= base_ ? 0 : static_cast<uint32_t>(static_cast<uint64_t>(ticks - base_) / 90);
}

VideoCodec TsDemuxer::video_codec() const {
  if (video_.stream_type == kStreamTypeH264) return VideoCodec::Avc;
  if (video_.stream_type == kStreamTypeHevc) return VideoCodec::Hevc;
  return VideoCodec::Unknown;
}

AudioCodec TsDemuxer::audio_codec() const {
  if (audio_.stream_type == kStreamTypeAdtsAac) return AudioCodec::Aac;
  if (audio_.stream_type != 0) return AudioCodec::Mp3;
  return AudioCodec::Unknown;
}

TsDemuxer::Stats TsDemuxer::stats() const {
  Stats s = stats_;
  s.bad_sections = pat_reader_.bad_sections() + pmt_reader_.bad_sections();
  return s;
}

}  // namespace sluice::media::ts
