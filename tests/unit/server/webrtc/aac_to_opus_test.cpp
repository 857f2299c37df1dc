// server/webrtc/aac_to_opus on real AAC made at test time by libavcodec's encoder (a 440 Hz tone
// at 44.1 kHz mono, 48 kHz stereo, 22.05 kHz stereo): the Opus it makes decodes without error,
// is 440 Hz at the input's level, its stamps step by exactly 20 ms and start the documented
// encoder delay before the input's, and a tone's onset lands where the input's timestamps put it;
// a new sequence header, corrupt frames, a gap and a jump. With SLUICE_AUDIO_BENCH set it also
// prints the CPU cost of a stream-second (docs/webrtc-audio.md).
#include "server/webrtc/aac_to_opus.hpp"

#include <doctest/doctest.h>
#include <stdlib.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <random>

#include "media/codec/opus.hpp"
#include "unit/server/webrtc/audio_media.hpp"

using namespace sluice;
using namespace sluice::test::audio;
using sluice::server::AacToOpus;

namespace {

constexpr uint32_t kBase = 1000;  // ms: the input's timeline starts here

// The hub frames of an AAC encoding: its sequence header, then its packets at base + pts.
std::vector<media::FramePtr> hub_frames(const Encoded& e, uint32_t base = kBase) {
  std::vector<media::FramePtr> in;
  in.push_back(aac_frame(0, e.extradata, ms_of(e.packets.front().pts, e.rate, base)));
  for (const Packet& p : e.packets) in.push_back(aac_frame(1, p.data, ms_of(p.pts, e.rate, base)));
  return in;
}

struct OpusOut {
  std::vector<media::OpusHead> heads;
  std::vector<uint32_t> head_stamps;
  std::vector<uint32_t> stamps;
  std::vector<Bytes> packets;
};

OpusOut split(const std::vector<media::FramePtr>& frames) {
  OpusOut o;
  for (const auto& f : frames) {
    REQUIRE(f->kind == media::FrameKind::Audio);
    const auto body = media::read_opus_body(f->payload.span());
    REQUIRE(body.has_value());
    const auto bytes = f->payload.span().subspan(body->offset, body->size);
    if (body->sequence_header) {
      CHECK(f->sequence_header);
      const auto head = media::parse_opus_head(bytes);
      REQUIRE(head.has_value());
      o.heads.push_back(*head);
      o.head_stamps.push_back(f->timestamp);
    } else {
      o.stamps.push_back(f->timestamp);
      o.packets.emplace_back(bytes.begin(), bytes.end());
    }
  }
  return o;
}

std::vector<media::FramePtr> run(AacToOpus& t, const std::vector<media::FramePtr>& in) {
  std::vector<media::FramePtr> out;
  for (const auto& f : in) t.push(*f, out);
  t.flush(out);
  return out;
}

// Every stamp 20 ms after the one before.
void check_steps(const std::vector<uint32_t>& stamps, size_t from = 0, size_t to = SIZE_MAX) {
  to = std::min(to, stamps.size());
  for (size_t i = from + 1; i < to; ++i) {
    INFO("packet " << i);
    REQUIRE(static_cast<int32_t>(stamps[i] - stamps[i - 1]) == 20);
  }
}

// The decoded tone: 440 Hz, at an RMS of 0.5/sqrt(2) within 1.5 dB, on every channel.
void check_tone(const Decoded& d, size_t from, size_t n) {
  CHECK(d.errors == 0);
  CHECK(d.rate == 48000);
  CHECK(dominant(d.mono, from, n, 48000) == doctest::Approx(440).epsilon(0.012));
  CHECK(dominant(d.other, from, n, 48000) == doctest::Approx(440).epsilon(0.012));
  CHECK(rms(d.mono, from, n) == doctest::Approx(0.3536).epsilon(0.16));
  CHECK(rms(d.other, from, n) == doctest::Approx(0.3536).epsilon(0.16));
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

TEST_CASE("AAC at 44.1 kHz mono, 48 kHz stereo and 22.05 kHz stereo becomes 20 ms Opus at 48 kHz, in sync") {
  struct Case {
    int rate, channels;
  };
  for (const Case c : {Case{44100, 1}, Case{48000, 2}, Case{22050, 2}}) {
    CAPTURE(c.rate);
    CAPTURE(c.channels);
    // Silence, then the tone from 300 ms: its onset measures where the audio lands in time.
    const Encoded e = encode("aac", tone(c.rate, c.channels, 2.0, 440, 0.5, 0.3), c.rate, c.channels, 128000);
    const auto in = hub_frames(e);
    AacToOpus t;
    const OpusOut o = split(run(t, in));

    REQUIRE(o.heads.size() == 1);
    CHECK(o.heads[0].channels == c.channels);
    CHECK(o.heads[0].input_sample_rate == static_cast<uint32_t>(c.rate));
    const int delay_ms = o.heads[0].pre_skip / 48;
    CHECK(o.heads[0].pre_skip % 48 == 0);  // a whole millisecond, by design
    CHECK(delay_ms == 7);                  // libopus's 6.5 ms lookahead, rounded up
    // The first packet starts the encoder delay before the first AAC frame, its head with it.
    REQUIRE(!o.stamps.empty());
    CHECK(o.stamps.front() == in.front()->timestamp - static_cast<uint32_t>(delay_ms));
    CHECK(o.head_stamps[0] == o.stamps.front());
    check_steps(o.stamps);
    // The last packet reaches the end of the input (its last frame lasts 1024 samples).
    const double input_end = in.back()->timestamp + 1024.0 * 1000 / c.rate;
    CHECK(o.stamps.back() + 20.0 >= input_end);
    CHECK(o.stamps.back() < input_end + 20 + delay_ms);

    CHECK(t.stats().frames_in == in.size());
    CHECK(t.stats().packets_out == o.packets.size());
    CHECK(t.stats().skipped == 0);
    CHECK(t.stats().resets == 0);
    CHECK(t.stats().silence_ms == 0);
    CHECK(t.stats().dropped_ms == 0);

    const Decoded d = decode("opus", o.packets, {}, c.channels);
    CHECK(d.channels == c.channels);
    check_tone(d, 48000 / 2, 48000);  // 0.5 s to 1.5 s of the stream's output
    // The tone starts where the input's timestamps put it (kBase + 300 ms), within 2 ms.
    const double start = o.stamps.front() + static_cast<double>(onset(d.mono)) / 48;
    CHECK(start == doctest::Approx(kBase + 300).epsilon(2.0 / (kBase + 300)));
  }
}

TEST_CASE("AAC 5.1 is downmixed to stereo Opus, scaled not to clip") {
  const Encoded e = encode("aac", tone(48000, 6, 1.0), 48000, 6, 256000);
  AacToOpus t;
  const OpusOut o = split(run(t, hub_frames(e)));
  REQUIRE(o.heads.size() == 1);
  CHECK(o.heads[0].channels == 2);
  check_steps(o.stamps);
  CHECK(t.stats().skipped == 0);
  const Decoded d = decode("opus", o.packets, {}, 2);
  // The same tone on every channel: front, centre and surround add up to the input's level.
  check_tone(d, 48000 / 4, 48000 / 2);
}

TEST_CASE("a new sequence header mid-stream reopens the decoder; a channel change starts a new timeline") {
  SUBCASE("44.1 kHz stereo then 48 kHz stereo: one timeline, stamps go on by 20 ms") {
    const Encoded a = encode("aac", tone(44100, 2, 1.0), 44100, 2, 128000);
    const Encoded b = encode("aac", tone(48000, 2, 1.0, 440, 0.5, 0.2), 48000, 2, 128000);
    auto in = hub_frames(a);
    const uint32_t next = in.back()->timestamp + 23;  // where a's last frame ends
    auto more = hub_frames(b, next + 21);             // b's first packet is its priming, 1024 early
    in.insert(in.end(), more.begin(), more.end());
    AacToOpus t;
    const OpusOut o = split(run(t, in));
    CHECK(o.heads.size() == 1);
    check_steps(o.stamps);
    CHECK(t.stats().resets == 0);
    CHECK(t.stats().skipped == 0);
    const Decoded d = decode("opus", o.packets, {}, 2);
    check_tone(d, 48000 / 4, 48000 / 2);  // a's tone
    // b's tone starts 200 ms after its timeline's start.
    const size_t late = static_cast<size_t>((next + 21 + 200 - o.stamps.front()) * 48);
    const double start = o.stamps.front() +
                         static_cast<double>(late + onset(std::vector<float>(
                                                        d.mono.begin() + static_cast<ptrdiff_t>(late), d.mono.end()))) /
                             48;
    CHECK(start == doctest::Approx(next + 21 + 200).epsilon(3.0 / 3000));
  }
  SUBCASE("44.1 kHz mono then 48 kHz stereo: a new OpusHead, and stamps never go back") {
    const Encoded a = encode("aac", tone(44100, 1, 1.0), 44100, 1, 96000);
    const Encoded b = encode("aac", tone(48000, 2, 1.0), 48000, 2, 128000);
    auto in = hub_frames(a);
    const uint32_t next = in.back()->timestamp + 23;
    const size_t first_b = in.size();
    auto more = hub_frames(b, next + 21);
    in.insert(in.end(), more.begin(), more.end());
    AacToOpus t;
    std::vector<media::FramePtr> out;
    for (size_t i = 0; i < first_b; ++i) t.push(*in[i], out);
    const size_t before = out.size();
    for (size_t i = first_b; i < in.size(); ++i) t.push(*in[i], out);
    t.flush(out);
    const OpusOut o = split(out);
    REQUIRE(o.heads.size() == 2);
    CHECK(o.heads[0].channels == 1);
    CHECK(o.heads[1].channels == 2);
    CHECK(t.stats().resets == 1);
    for (size_t i = 1; i < o.stamps.size(); ++i) CHECK(static_cast<int32_t>(o.stamps[i] - o.stamps[i - 1]) >= 20);
    // The second part decodes on its own as the tone, in stereo.
    const OpusOut first = split({out.begin(), out.begin() + static_cast<ptrdiff_t>(before)});
    const OpusOut second = split({out.begin() + static_cast<ptrdiff_t>(before), out.end()});
    REQUIRE(second.heads.size() == 1);
    check_steps(second.stamps);
    const Decoded d = decode("opus", second.packets, {}, 2);
    check_tone(d, 48000 / 4, 48000 / 2);
    CHECK(!first.packets.empty());
  }
}

TEST_CASE("corrupt AAC frames and frames before any sequence header are skipped and counted") {
  const Encoded e = encode("aac", tone(48000, 2, 2.0), 48000, 2, 128000);
  auto in = hub_frames(e);
  std::mt19937 rng(36);
  Bytes garbage(300);
  for (auto& b : garbage) b = static_cast<uint8_t>(rng());
  // Frames 20 and 21 and 60 (after the sequence header at 0) become noise of the same stamps.
  for (size_t i : {21u, 22u, 61u}) in[i] = aac_frame(1, garbage, in[i]->timestamp);
  AacToOpus t;
  std::vector<media::FramePtr> out;
  t.push(*aac_frame(1, e.packets[5].data, 500), out);  // no sequence header yet
  CHECK(t.stats().skipped == 1);
  CHECK(out.empty());
  for (const auto& f : in) t.push(*f, out);
  t.flush(out);
  CHECK(t.stats().skipped == 4);
  CHECK(t.stats().resets == 0);
  // The two frames in a row leave a 43 ms gap: filled with silence; the single one (21 ms) too.
  CHECK(t.stats().silence_ms >= 60);
  const OpusOut o = split(out);
  check_steps(o.stamps);
  const Decoded d = decode("opus", o.packets, {}, 2);
  check_tone(d, 48000, 48000 / 2);  // after the damage: 1 s to 1.5 s
  // A sequence header that does not parse is skipped too, and frames after it with it.
  AacToOpus u;
  std::vector<media::FramePtr> none;
  u.push(*aac_frame(0, Bytes{0xFF}, 0), none);
  u.push(*in[1], none);
  CHECK(u.stats().skipped == 2);
  CHECK(none.empty());
}

TEST_CASE("a gap under a second is filled with silence in place; a jump starts a new timeline") {
  SUBCASE("gap: 5 frames missing in the silence before the tone, which still starts on time") {
    const Encoded e = encode("aac", tone(48000, 2, 2.0, 440, 0.5, 1.0), 48000, 2, 128000);
    auto in = hub_frames(e);
    in.erase(in.begin() + 20, in.begin() + 25);  // 107 ms around 0.4 s
    AacToOpus t;
    const OpusOut o = split(run(t, in));
    check_steps(o.stamps);
    CHECK(t.stats().silence_ms == doctest::Approx(107).epsilon(0.03));
    CHECK(t.stats().resets == 0);
    const Decoded d = decode("opus", o.packets, {}, 2);
    const double start = o.stamps.front() + static_cast<double>(onset(d.mono)) / 48;
    CHECK(start == doctest::Approx(kBase + 1000).epsilon(2.0 / 2000));
  }
  SUBCASE("jump: a minute later, no minute of silence") {
    const Encoded e = encode("aac", tone(48000, 2, 2.0), 48000, 2, 128000);
    auto in = hub_frames(e);
    for (size_t i = 40; i < in.size(); ++i) in[i] = aac_frame(1, e.packets[i - 1].data, in[i]->timestamp + 60000);
    AacToOpus t;
    const OpusOut o = split(run(t, in));
    CHECK(t.stats().resets == 1);
    CHECK(t.stats().silence_ms == 0);
    CHECK(o.heads.size() == 1);     // the same OpusHead: not sent again
    CHECK(o.packets.size() < 110);  // 2 s of audio plus the padding of two timelines
    size_t jump = 0;
    for (size_t i = 1; i < o.stamps.size(); ++i) {
      if (o.stamps[i] - o.stamps[i - 1] != 20) {
        CHECK(jump == 0);
        jump = i;
      }
    }
    REQUIRE(jump > 0);
    // The new timeline starts the encoder delay before the first frame after the jump.
    CHECK(o.stamps[jump] == in[40]->timestamp - 7);
    check_steps(o.stamps, jump);
  }
  SUBCASE("overlap: a frame sent again later is dropped, not played twice") {
    const Encoded e = encode("aac", tone(48000, 2, 1.0), 48000, 2, 128000);
    auto in = hub_frames(e);
    AacToOpus once;
    const OpusOut plain = split(run(once, in));
    // Frames 10-14 come again after 30 with their old stamps (107 ms back).
    std::vector<media::FramePtr> again;
    for (size_t i = 10; i < 15; ++i) again.push_back(aac_frame(1, e.packets[i - 1].data, in[i]->timestamp));
    in.insert(in.begin() + 31, again.begin(), again.end());
    AacToOpus t;
    const OpusOut o = split(run(t, in));
    check_steps(o.stamps);
    CHECK(t.stats().dropped_ms == doctest::Approx(107).epsilon(0.03));
    CHECK(t.stats().silence_ms == 0);
    CHECK(t.stats().resets == 0);
    CHECK(o.stamps == plain.stamps);  // played once: as long as without the repeat
  }
}

TEST_CASE("bench: CPU per stream-second of AAC 44.1 kHz stereo to Opus (SLUICE_AUDIO_BENCH)") {
  if (getenv("SLUICE_AUDIO_BENCH") == nullptr) return;
  const double seconds = 20;
  const Encoded e = encode("aac", busy(44100, 2, seconds), 44100, 2, 128000);
  const auto in = hub_frames(e);
  AacToOpus t;
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
  std::printf("AAC->Opus: %.2f ms CPU per stream-second, push median %.3f ms, longest %.3f ms (%zu packets)\n",
              spent / seconds, median(pushes), *std::max_element(pushes.begin(), pushes.end()), out.size());
}
