// server/webrtc/opus_to_aac on real Opus made at test time by libopus (a 440 Hz tone, stereo and
// mono, stamped as a WebRTC sender stamps it: the capture time of each packet's first input
// sample, 20 ms apart): the AAC it makes decodes without error with its own AudioSpecificConfig,
// is 440 Hz at the input's level on both channels, its stamps are the exact 48 kHz positions of
// 1024-sample frames rounded to the millisecond (no drift), starting the AAC priming before the
// input; lost packets, a DTX pause, corrupt and repeated packets, a jump. With SLUICE_AUDIO_BENCH
// set it prints the CPU cost of a stream-second (docs/webrtc-audio.md).
#include "server/webrtc/opus_to_aac.hpp"

#include <doctest/doctest.h>
#include <stdlib.h>
#include <time.h>

#include <cmath>
#include <algorithm>
#include <cstdio>

#include "media/codec/aac.hpp"
#include "media/codec/opus.hpp"
#include "unit/server/webrtc/audio_media.hpp"

using namespace sluice;
using namespace sluice::test::audio;
using sluice::server::OpusToAac;

namespace {

constexpr uint32_t kBase = 5000;  // ms: the input's first packet
// libopus's lookahead at "audio": a sender stamps a packet with its first input sample, so its
// decoded audio comes this late (as between two browsers).
constexpr double kSenderLookaheadMs = 312.0 / 48;

// The hub's Opus frames of a libopus encoding: an OpusHead, then packet n at base + 20 n.
std::vector<media::FramePtr> hub_frames(const Encoded& e, uint32_t base = kBase) {
  std::vector<media::FramePtr> in;
  media::OpusHead head;
  head.channels = static_cast<uint8_t>(e.channels);
  head.pre_skip = 312;
  in.push_back(media::make_frame(8, base, Slice::adopt(media::opus_sequence_header_body(head))));
  for (size_t n = 0; n < e.packets.size(); ++n) {
    in.push_back(media::make_frame(8, base + static_cast<uint32_t>(20 * n),
                                   Slice::adopt(media::opus_frame_body(e.packets[n].data))));
  }
  return in;
}

media::FramePtr opus_frame(const Bytes& packet, uint32_t stamp) {
  return media::make_frame(8, stamp, Slice::adopt(media::opus_frame_body(packet)));
}

struct AacOut {
  std::vector<Bytes> configs;
  std::vector<uint32_t> config_stamps;
  std::vector<uint32_t> stamps;
  std::vector<Bytes> frames;
};

AacOut split(const std::vector<media::FramePtr>& frames) {
  AacOut o;
  for (const auto& f : frames) {
    REQUIRE(f->kind == media::FrameKind::Audio);
    const auto body = f->payload.span();
    REQUIRE(body.size() > 2);
    REQUIRE(body[0] == 0xAF);
    Bytes rest(body.begin() + 2, body.end());
    if (body[1] == 0) {
      CHECK(f->sequence_header);
      o.configs.push_back(std::move(rest));
      o.config_stamps.push_back(f->timestamp);
    } else {
      REQUIRE(body[1] == 1);
      o.stamps.push_back(f->timestamp);
      o.frames.push_back(std::move(rest));
    }
  }
  return o;
}

std::vector<media::FramePtr> run(OpusToAac& t, const std::vector<media::FramePtr>& in) {
  std::vector<media::FramePtr> out;
  for (const auto& f : in) t.push(*f, out);
  t.flush(out);
  return out;
}

// Frame k of a timeline starts at 1024 (k - 1) samples from its anchor (the priming first): the
// stamp is that exact time rounded to the nearest millisecond, so steps are 21, 21, 22 ms.
void check_stamps(const std::vector<uint32_t>& stamps, uint32_t anchor, size_t from = 0, size_t to = SIZE_MAX) {
  to = std::min(to, stamps.size());
  for (size_t k = from; k < to; ++k) {
    INFO("frame " << k);
    const auto exact = static_cast<double>(1024 * static_cast<int64_t>(k - from) - 1024) / 48;
    REQUIRE(stamps[k] == anchor + static_cast<uint32_t>(std::llround(exact)));
  }
}

void check_tone(const Decoded& d, size_t from, size_t n) {
  CHECK(d.errors == 0);
  CHECK(d.rate == 48000);
  CHECK(d.channels == 2);
  CHECK(dominant(d.mono, from, n, 48000) == doctest::Approx(440).epsilon(0.012));
  CHECK(dominant(d.other, from, n, 48000) == doctest::Approx(440).epsilon(0.012));
  CHECK(rms(d.mono, from, n) == doctest::Approx(0.3536).epsilon(0.16));
  CHECK(rms(d.other, from, n) == doctest::Approx(0.3536).epsilon(0.16));
}

// Where the tone starts, in ms of the stream: the first AAC frame's exact start plus the onset.
double onset_ms(const AacOut& o, const Decoded& d) {
  return o.stamps.front() - 1024.0 / 48 + 21 + static_cast<double>(onset(d.mono)) / 48;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

}  // namespace

TEST_CASE("Opus stereo and mono becomes AAC-LC 48 kHz stereo, with exact stamps and in sync") {
  for (const int channels : {2, 1}) {
    CAPTURE(channels);
    const Encoded e = encode("libopus", tone(48000, channels, 2.0, 440, 0.5, 0.3), 48000, channels, 96000);
    const auto in = hub_frames(e);
    OpusToAac t;
    const AacOut o = split(run(t, in));

    REQUIRE(o.configs.size() == 1);
    const auto asc = media::parse_aac_config(o.configs[0]);
    REQUIRE(asc);
    CHECK(asc->object_type == 2);  // AAC-LC
    CHECK(asc->sample_rate == 48000);
    CHECK(asc->channels == 2);
    // The first frame (the encoder's priming) starts 21.33 ms before the first packet.
    REQUIRE(!o.stamps.empty());
    CHECK(o.stamps.front() == kBase - 21);
    CHECK(o.config_stamps[0] == o.stamps.front());
    check_stamps(o.stamps, kBase);
    // 2 s of input plus the priming and the last frame's padding: 96 or 97 frames, no drift.
    CHECK(o.stamps.size() >= 2000 * 48 / 1024 + 1);
    CHECK(o.stamps.size() <= 2000 * 48 / 1024 + 3);

    CHECK(t.stats().frames_in == in.size());
    CHECK(t.stats().frames_out == o.frames.size());
    CHECK(t.stats().skipped == 0);
    CHECK(t.stats().resets == 0);
    CHECK(t.stats().silence_ms == 0);
    CHECK(t.stats().dropped_ms == 0);

    const Decoded d = decode("aac", o.frames, o.configs[0]);
    check_tone(d, 48000 / 2, 48000);
    CHECK(onset_ms(o, d) == doctest::Approx(kBase + 300 + kSenderLookaheadMs).epsilon(2.0 / kBase));
  }
}

TEST_CASE("lost packets and a DTX pause become silence in place; a jump starts a new timeline") {
  const Encoded e = encode("libopus", tone(48000, 2, 2.0, 440, 0.5, 1.0), 48000, 2, 96000);
  SUBCASE("3 packets lost, then a 400 ms pause, before the tone: it still starts on time") {
    auto in = hub_frames(e);
    in.erase(in.begin() + 11, in.begin() + 14);  // 60 ms at 200 ms
    in.erase(in.begin() + 20, in.begin() + 40);  // 400 ms at 520 ms
    OpusToAac t;
    const AacOut o = split(run(t, in));
    check_stamps(o.stamps, kBase);
    CHECK(t.stats().silence_ms == 460);
    CHECK(t.stats().resets == 0);
    const Decoded d = decode("aac", o.frames, o.configs.at(0));
    CHECK(d.errors == 0);
    CHECK(onset_ms(o, d) == doctest::Approx(kBase + 1000 + kSenderLookaheadMs).epsilon(2.0 / kBase));
  }
  SUBCASE("repeated packets are dropped") {
    auto in = hub_frames(e);
    std::vector<media::FramePtr> again;
    for (size_t n = 5; n < 10; ++n)
      again.push_back(opus_frame(e.packets[n].data, kBase + static_cast<uint32_t>(20 * n)));
    in.insert(in.begin() + 21, again.begin(), again.end());
    OpusToAac t;
    const AacOut o = split(run(t, in));
    check_stamps(o.stamps, kBase);
    CHECK(t.stats().dropped_ms == 100);
    CHECK(t.stats().resets == 0);
    const Decoded d = decode("aac", o.frames, o.configs.at(0));
    CHECK(onset_ms(o, d) == doctest::Approx(kBase + 1000 + kSenderLookaheadMs).epsilon(2.0 / kBase));
  }
  SUBCASE("a jump of 10 s: a new timeline, the same AudioSpecificConfig not sent again") {
    auto in = hub_frames(e);
    for (size_t i = 30; i < in.size(); ++i) in[i] = opus_frame(e.packets[i - 1].data, in[i]->timestamp + 10000);
    OpusToAac t;
    const AacOut o = split(run(t, in));
    CHECK(t.stats().resets == 1);
    CHECK(t.stats().silence_ms == 0);
    CHECK(o.configs.size() == 1);
    CHECK(o.stamps.size() < 2000 * 48 / 1024 + 6);
    size_t jump = 0;
    for (size_t k = 1; k < o.stamps.size(); ++k) {
      if (o.stamps[k] - o.stamps[k - 1] > 1000) jump = k;
    }
    REQUIRE(jump > 0);
    check_stamps(o.stamps, kBase, 0, jump);
    check_stamps(o.stamps, in[30]->timestamp, jump);
  }
}

TEST_CASE("corrupt Opus packets and multichannel streams are skipped and counted") {
  const Encoded e = encode("libopus", tone(48000, 2, 1.0), 48000, 2, 96000);
  auto in = hub_frames(e);
  // A code 3 packet with no frames, a code 1 packet of two frames of unequal size, nothing.
  in[10] = opus_frame(Bytes{0xFF, 0x00}, in[10]->timestamp);
  in[11] = opus_frame(Bytes{0xFD, 0x01, 0x02, 0x03}, in[11]->timestamp);
  in[30] = opus_frame(Bytes{}, in[30]->timestamp);
  OpusToAac t;
  const AacOut o = split(run(t, in));
  CHECK(t.stats().skipped == 3);
  CHECK(t.stats().silence_ms == 60);
  check_stamps(o.stamps, kBase);
  const Decoded d = decode("aac", o.frames, o.configs.at(0));
  check_tone(d, 48000 / 2, 48000 / 4);

  OpusToAac u;
  std::vector<media::FramePtr> out;
  media::OpusHead six;
  six.channels = 6;
  u.push(*media::make_frame(8, 0, Slice::adopt(media::opus_sequence_header_body(six))), out);
  u.push(*in[1], out);
  CHECK(u.stats().skipped == 2);
  CHECK(out.empty());
}

TEST_CASE("bench: CPU per stream-second of Opus stereo to AAC (SLUICE_AUDIO_BENCH)") {
  if (getenv("SLUICE_AUDIO_BENCH") == nullptr) return;
  const double seconds = 20;
  const Encoded e = encode("libopus", busy(48000, 2, seconds), 48000, 2, 96000);
  const auto in = hub_frames(e);
  OpusToAac t;
  std::vector<media::FramePtr> out;
  const double t0 = cpu_ms();
  // How long one push() holds the loop: the median, and the longest (opening the codecs, the
  // first time in the process, is among the first pushes).
  std::vector<double> pushes;
  for (const auto& f : in) {
    const double before = cpu_ms();
    t.push(*f, out);
    pushes.push_back(cpu_ms() - before);
  }
  t.flush(out);
  const double spent = cpu_ms() - t0;
  std::printf("Opus->AAC: %.2f ms CPU per stream-second, push median %.3f ms, longest %.3f ms (%zu frames)\n",
              spent / seconds, median(pushes), *std::max_element(pushes.begin(), pushes.end()), out.size());
}
