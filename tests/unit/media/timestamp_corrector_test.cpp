// TimestampCorrector: jumps of the publisher's clock (forward, back) are closed up with one offset
// both kinds share; wraps, interleaving, skew, audio gaps and ordinary jitter are left alone.
#include <doctest/doctest.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "media/timestamp_corrector.hpp"

using namespace sluice::media;

namespace {

constexpr FrameKind A = FrameKind::Audio;
constexpr FrameKind V = FrameKind::Video;
constexpr FrameKind D = FrameKind::Data;

struct In {
  FrameKind kind;
  uint32_t ts;
};

std::vector<uint32_t> run(TimestampCorrector& c, const std::vector<In>& in) {
  std::vector<uint32_t> out;
  for (const In& m : in) out.push_back(c.correct(m.kind, m.ts));
  return out;
}

// 25 fps video and ~43 messages/s of audio, interleaved by timestamp, from `start` for `ms`.
std::vector<In> av(uint32_t start, uint32_t ms) {
  std::vector<In> in;
  uint32_t v = 0, a = 0;
  while (v < ms || a < ms) {
    if (v <= a) {
      in.push_back({V, start + v});
      v += 40;
    } else {
      in.push_back({A, start + a});
      a += 23;
    }
  }
  return in;
}

// Per kind, every step from one message to the next is within [min, max] ms (modular).
void check_steps(const std::vector<In>& in, const std::vector<uint32_t>& out, int64_t min, int64_t max) {
  for (FrameKind kind : {A, V}) {
    std::optional<uint32_t> last;
    for (size_t i = 0; i < in.size(); ++i) {
      if (in[i].kind != kind) continue;
      if (last) {
        const int64_t d = static_cast<int32_t>(out[i] - *last);
        CHECK(d >= min);
        CHECK(d <= max);
      }
      last = out[i];
    }
  }
}

}  // namespace

TEST_CASE("ordinary interleaved audio and video, with jitter, is left untouched") {
  TimestampCorrector c(1000);
  std::vector<In> in = av(5000, 10000);
  // Jitter: audio a few ms behind video, and the odd late message.
  in.insert(in.begin() + 50, In{A, in[49].ts - 30});
  in.insert(in.begin() + 120, In{V, in[119].ts + 300});
  std::vector<uint32_t> out = run(c, in);
  for (size_t i = 0; i < in.size(); ++i) CHECK(out[i] == in[i].ts);
  CHECK(c.jumps() == 0);
}

TEST_CASE("the first message keeps its timestamp, even a large one") {
  TimestampCorrector c(1000);
  CHECK(c.correct(D, 0) == 0);
  CHECK(c.correct(V, 3'000'000) == 3'000'000);
  CHECK(c.correct(A, 3'000'010) == 3'000'010);
  CHECK(c.jumps() == 0);
}

TEST_CASE("a forward jump of both kinds is closed up and time keeps rising") {
  TimestampCorrector c(1000);
  std::vector<In> in = av(0, 2000);
  std::vector<In> after = av(62000, 2000);  // the publisher's clock jumped by 60 s
  in.insert(in.end(), after.begin(), after.end());
  std::optional<TimestampCorrector::Jump> jump;
  std::vector<uint32_t> out;
  std::vector<size_t> jumps_at;
  for (size_t i = 0; i < in.size(); ++i) {
    jump.reset();
    out.push_back(c.correct(in[i].kind, in[i].ts, &jump));
    if (jump) {
      jumps_at.push_back(i);
      CHECK(jump->step_ms > 59'000);
      CHECK(jump->to == in[i].ts);
      CHECK(jump->output == out[i]);
    }
  }
  REQUIRE(jumps_at.size() == 1);
  CHECK(c.jumps() == 1);
  // Both kinds share the new offset: after the jump, every message is shifted by the same amount.
  const uint32_t shift = in.back().ts - out.back();
  for (size_t i = jumps_at[0]; i < in.size(); ++i) CHECK(in[i].ts - out[i] == shift);
  check_steps(in, out, 0, 60);
  CHECK(out.back() < 4100);
}

TEST_CASE("a backward jump (the clock restarts at 0) is closed up") {
  TimestampCorrector c(1000);
  std::vector<In> in = av(90'000, 2000);
  std::vector<In> after = av(0, 2000);
  in.insert(in.end(), after.begin(), after.end());
  std::vector<uint32_t> out = run(c, in);
  CHECK(c.jumps() == 1);
  check_steps(in, out, 0, 60);
  CHECK(out.back() > 93'900);
  CHECK(out.back() < 94'100);
}

TEST_CASE("the 32-bit wrap is an ordinary step, and a jump across it is still a jump") {
  TimestampCorrector c(1000);
  std::vector<In> in = av(0xFFFFFF00u, 1000);  // wraps after 256 ms
  std::vector<uint32_t> out = run(c, in);
  for (size_t i = 0; i < in.size(); ++i) CHECK(out[i] == in[i].ts);
  CHECK(c.jumps() == 0);
  // A jump from just before the wrap to far after it.
  TimestampCorrector j(1000);
  std::vector<In> in2 = av(0xFFFFF000u, 1000);
  std::vector<In> after = av(50'000, 1000);
  in2.insert(in2.end(), after.begin(), after.end());
  std::vector<uint32_t> out2 = run(j, in2);
  CHECK(j.jumps() == 1);
  check_steps(in2, out2, 0, 60);
}

TEST_CASE("a kind whose messages stop for a while (audio gap) is no jump") {
  TimestampCorrector c(1000);
  std::vector<In> in;
  for (uint32_t t = 0; t < 10'000; t += 40) {
    in.push_back({V, t});
    if (t < 2000 || t > 7000) in.push_back({A, t + 5});  // 5 s without audio
  }
  std::vector<uint32_t> out = run(c, in);
  for (size_t i = 0; i < in.size(); ++i) CHECK(out[i] == in[i].ts);
  CHECK(c.jumps() == 0);
}

TEST_CASE("a constant skew between the audio and video clocks is no jump") {
  TimestampCorrector c(1000);
  std::vector<In> in;
  for (uint32_t t = 0; t < 10'000; t += 40) {
    in.push_back({V, t});
    in.push_back({A, t + 1500});  // the muxer's audio clock runs 1.5 s ahead
  }
  std::vector<uint32_t> out = run(c, in);
  for (size_t i = 0; i < in.size(); ++i) CHECK(out[i] == in[i].ts);
  CHECK(c.jumps() == 0);
}

TEST_CASE("a kind that jumps a few messages after the other follows the same offset") {
  TimestampCorrector c(1000);
  std::vector<In> in = {{V, 1000},
                        {A, 1010},
                        {V, 1040},
                        {A, 1033},
                        // video jumps first; two audio messages of the old clock are still late
                        {V, 61080},
                        {A, 1056},
                        {A, 1079},
                        {V, 61120},
                        {A, 61102},
                        {V, 61160},
                        {A, 61125}};
  std::vector<uint32_t> out = run(c, in);
  CHECK(c.jumps() == 1);
  CHECK(out[4] == 1040 + TimestampCorrector::kStepMs);  // the latest time so far was 1040
  CHECK(out[5] == 1056);                                // still on its old clock: untouched
  CHECK(out[6] == 1079);
  const uint32_t shift = 61080 - out[4];
  for (size_t i : {7u, 8u, 9u, 10u}) CHECK(in[i].ts - out[i] == shift);
}

TEST_CASE("data messages follow the offset, and one out of line gets the latest time") {
  TimestampCorrector c(1000);
  run(c, {{V, 0}, {A, 10}, {V, 40}, {V, 80}, {V, 70'000}, {V, 70'040}});
  CHECK(c.jumps() == 1);
  const uint32_t latest = 80 + TimestampCorrector::kStepMs + 40;
  CHECK(c.correct(D, 70'040) == latest);  // a cue point on the publisher's clock
  CHECK(c.correct(D, 0) == latest);       // onMetaData sent again at 0: no jump back
  CHECK(c.correct(V, 70'080) == latest + 40);
  CHECK(c.jumps() == 1);
}

TEST_CASE("the threshold tells a pause from a jump") {
  TimestampCorrector c(5000);
  std::vector<uint32_t> out = run(c, {{V, 0}, {V, 40}, {V, 3040}, {V, 3080}});  // a 3 s pause
  CHECK(out == std::vector<uint32_t>{0, 40, 3040, 3080});
  TimestampCorrector tight(1000);
  out = run(tight, {{V, 0}, {V, 40}, {V, 3040}, {V, 3080}});
  CHECK(out == std::vector<uint32_t>{0, 40, 50, 90});
}

TEST_CASE("a publication that continues another begins one frame interval after it, both kinds together") {
  TimestampCorrector first(1000);
  run(first, {{V, 50'000}, {A, 50'010}, {V, 50'040}, {A, 50'033}});
  CHECK(first.latest_out() == 50'040);
  const uint32_t at = first.handover_point();
  CHECK(at == 50'040 + 40);  // the last video step: no frame of the new one inside the old one's last interval
  TimestampCorrector next(1000);
  next.continue_after(at);
  CHECK(next.correct(D, 0) == at);  // its metadata before any frame: at the handover
  std::vector<uint32_t> out = run(next, {{V, 0}, {A, 5}, {V, 40}, {A, 28}});
  CHECK(out == std::vector<uint32_t>{at, at + 5, at + 40, at + 28});
  CHECK(next.jumps() == 0);  // a handover is not a jump of the new publisher's clock

  TimestampCorrector audio_ahead(1000);  // on the video's cadence, past the audio already out
  run(audio_ahead, {{V, 0}, {V, 40}, {A, 60}});
  CHECK(audio_ahead.handover_point() == 80);
  run(audio_ahead, {{A, 130}});
  CHECK(audio_ahead.handover_point() == 160);
  TimestampCorrector audio_only(1000);
  run(audio_only, {{A, 0}, {A, 23}});
  CHECK(audio_only.handover_point() == 23 + TimestampCorrector::kStepMs);
  TimestampCorrector still(1000);  // video frames at one time: at least kStepMs
  run(still, {{V, 100}, {V, 100}});
  CHECK(still.handover_point() == 100 + TimestampCorrector::kStepMs);
  TimestampCorrector paused(1000);  // a step past the threshold is not a frame interval
  run(paused, {{V, 0}, {V, 900}});
  CHECK(paused.handover_point() == 900 + 900);
  TimestampCorrector long_gap(500);
  run(long_gap, {{V, 0}, {V, 400}});
  CHECK(long_gap.handover_point() == 400 + 400);
}

TEST_CASE("a taker's audio stamped before its first video is flagged until it reaches the handover point") {
  // GStreamer's flvmux stamps its audio up to ~150 ms before its video at the start: with the video
  // first, that audio would go out before the handover point, over the old publisher's last audio.
  const uint32_t at = 10'000;
  TimestampCorrector next(1000);
  next.continue_after(at);
  CHECK(next.correct(V, 5'000) == at);
  CHECK(!next.before_handover());
  CHECK(next.correct(A, 4'850) == at - 150);
  CHECK(next.before_handover());
  CHECK(next.handover_at() == at);
  CHECK(next.correct(A, 4'977) == at - 23);
  CHECK(next.before_handover());
  CHECK(next.correct(D, 4'990) == at - 10);
  CHECK(!next.before_handover());  // data is never flagged
  CHECK(next.correct(A, 5'000) == at);
  CHECK(!next.before_handover());  // at the point: the check ends for audio
  CHECK(next.correct(V, 5'040) == at + 40);
  CHECK(!next.before_handover());

  // Once a kind has reached the point it is never flagged again, even when its times are 2^31 ms
  // and more past the point (the modular clock would read them as before it).
  TimestampCorrector weeks(60'000);
  weeks.continue_after(at);
  CHECK(weeks.correct(A, 0) == at);
  uint32_t ts = 0;
  bool flagged = false;
  for (int i = 0; i < 40'000; ++i) {  // 40,000 ordinary steps of 59 s: 27 days
    ts += 59'000;
    weeks.correct(A, ts);
    flagged = flagged || weeks.before_handover();
  }
  CHECK(static_cast<uint32_t>(ts) > 0x80000000u);
  CHECK(!flagged);
  CHECK(weeks.jumps() == 0);

  // A publication that continues nothing never flags.
  TimestampCorrector fresh(1000);
  CHECK(fresh.correct(V, 5'000) == 5'000);
  CHECK(fresh.correct(A, 4'850) == 4'850);
  CHECK(!fresh.before_handover());
}
