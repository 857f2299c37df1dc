// SubscriberQueue drop policy: inter frames dropped above the soft limit until the next key
// frame, audio / sequence headers / metadata kept, overflow at the hard limit.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "media/subscriber_queue.hpp"
#include "protocol/message.hpp"

using namespace sluice;
using namespace sluice::media;
using sluice::Slice;
namespace mt = sluice::protocol::msg_type;
using Bytes = std::vector<uint8_t>;
using R = SubscriberQueue::PushResult;

namespace {

FramePtr frame(uint8_t type, uint32_t ts, Bytes b) { return make_frame(type, ts, Slice::adopt(std::move(b))); }
FramePtr sized(Bytes head, size_t size, uint8_t type, uint32_t ts) {
  head.resize(std::max(size, head.size()), 0x33);
  return frame(type, ts, head);
}
FramePtr key(uint32_t ts, size_t size = 100) { return sized({0x17, 1, 0, 0, 0}, size, mt::kVideo, ts); }
FramePtr inter(uint32_t ts, size_t size = 100) { return sized({0x27, 1, 0, 0, 0}, size, mt::kVideo, ts); }
FramePtr audio(uint32_t ts, size_t size = 100) { return sized({0xaf, 1}, size, mt::kAudio, ts); }
FramePtr video_seq(uint32_t ts) { return sized({0x17, 0, 0, 0, 0}, 100, mt::kVideo, ts); }
FramePtr metadata(uint32_t ts) {
  Bytes b = {0x02, 0, 10, 'o', 'n', 'M', 'e', 't', 'a', 'D', 'a', 't', 'a'};
  return sized(b, 100, mt::kDataAmf0, ts);
}
FramePtr cue(uint32_t ts) {
  Bytes b = {0x02, 0, 10, 'o', 'n', 'C', 'u', 'e', 'P', 'o', 'i', 'n', 't'};
  return sized(b, 100, mt::kDataAmf0, ts);
}
FramePtr track_inter(uint8_t track, uint32_t ts) {
  return frame(mt::kVideo, ts, {0xa6, 0x03, 'a', 'v', 'c', '1', track, 0});
}
FramePtr track_key(uint8_t track, uint32_t ts) {
  return frame(mt::kVideo, ts, {0x96, 0x03, 'a', 'v', 'c', '1', track, 0});
}

std::vector<FramePtr> drain(SubscriberQueue& q) {
  std::vector<FramePtr> out;
  q.pop_batch(out, 1u << 20, UINT64_MAX);
  return out;
}

}  // namespace

TEST_CASE("below the soft limit everything is queued in order") {
  SubscriberQueue q({1000, 5000, 0, 0});
  std::vector<FramePtr> sent = {video_seq(0), key(0), audio(10), inter(40), audio(33)};
  for (const auto& f : sent) CHECK(q.push(f) == R::Queued);
  CHECK(q.size() == 5);
  CHECK(q.bytes() == 500);
  CHECK(drain(q) == sent);
  CHECK(q.empty());
  CHECK(q.bytes() == 0);
  CHECK(q.dropped_frames() == 0);
}

TEST_CASE("above the soft limit inter frames are dropped until the next key frame") {
  SubscriberQueue q({450, 10000, 0, 0});
  CHECK(q.push(key(0)) == R::Queued);
  for (uint32_t i = 1; i <= 3; ++i) CHECK(q.push(inter(i * 40)) == R::Queued);
  CHECK(q.bytes() == 400);
  CHECK(q.push(inter(160)) == R::Dropped);     // would make 500 > 450
  CHECK(q.push(audio(170)) == R::Queued);      // audio is never dropped
  CHECK(q.push(video_seq(175)) == R::Queued);  // nor sequence headers
  CHECK(q.push(metadata(176)) == R::Queued);   // nor metadata
  CHECK(q.push(cue(177)) == R::Dropped);       // other data is
  CHECK(q.dropped_frames() == 2);
  CHECK(q.dropped_bytes() == 200);

  // The queue drains, but the decoder lost a reference frame: keep dropping until a key frame.
  drain(q);
  CHECK(q.push(inter(200)) == R::Dropped);
  CHECK(q.push(cue(205)) == R::Queued);  // data is independent: only dropped above soft
  auto k = key(240);
  CHECK(q.push(k) == R::Queued);
  auto i = inter(280);
  CHECK(q.push(i) == R::Queued);
  auto out = drain(q);
  REQUIRE(out.size() == 3);
  CHECK(out[1] == k);
  CHECK(out[2] == i);
}

TEST_CASE("key frames are kept above the soft limit") {
  SubscriberQueue q({150, 10000, 0, 0});
  CHECK(q.push(key(0)) == R::Queued);
  CHECK(q.push(inter(40)) == R::Dropped);
  CHECK(q.push(key(80)) == R::Queued);
  CHECK(q.push(inter(120)) == R::Dropped);  // still above soft
  CHECK(q.size() == 2);
}

TEST_CASE("the wait for a key frame is per track") {
  SubscriberQueue q({10, 0, 0, 0});  // track frames below are 8 bytes: two exceed the soft limit
  CHECK(q.push(track_key(1, 0)) == R::Queued);
  CHECK(q.push(track_inter(1, 40)) == R::Dropped);
  drain(q);
  CHECK(q.push(track_key(2, 40)) == R::Queued);
  drain(q);
  CHECK(q.push(track_inter(1, 80)) == R::Dropped);  // track 2's key frame does not help track 1
  CHECK(q.push(track_inter(2, 80)) == R::Queued);   // track 2 lost nothing
  drain(q);
  CHECK(q.push(track_key(1, 120)) == R::Queued);
  drain(q);
  CHECK(q.push(track_inter(1, 160)) == R::Queued);
}

TEST_CASE("overflow past the hard limit is sticky") {
  SubscriberQueue q({200, 500, 0, 0});
  CHECK(q.push(key(0)) == R::Queued);
  CHECK(q.push(audio(10)) == R::Queued);
  CHECK(q.push(audio(20)) == R::Queued);
  CHECK(q.push(audio(30)) == R::Queued);
  CHECK(q.push(audio(40)) == R::Queued);
  CHECK(q.bytes() == 500);
  CHECK(q.push(audio(50)) == R::Overflow);
  CHECK(q.overflowed());
  drain(q);
  CHECK(q.push(audio(60)) == R::Overflow);
}

TEST_CASE("bytes already handed to the socket count") {
  SubscriberQueue q({250, 1000, 0, 0});
  CHECK(q.push(key(0)) == R::Queued);
  CHECK(q.push(inter(40)) == R::Queued);
  CHECK(q.push(inter(80), 100) == R::Dropped);    // 200 queued + 100 in the socket + 100 > 250
  CHECK(q.push(key(120), 100) == R::Queued);      // a key frame is kept anyway
  CHECK(q.push(audio(130), 700) == R::Overflow);  // 300 + 700 + 100 > 1000
}

TEST_CASE("a single frame never overflows on its own") {
  SubscriberQueue q({10, 50, 0, 0});
  CHECK(q.push(key(0, 5000)) == R::Queued);
  CHECK(q.push(audio(10)) == R::Overflow);
}

TEST_CASE("millisecond limits use the timestamp span of the queue") {
  SubscriberQueue q({0, 0, 1000, 3000});
  CHECK(q.push(key(0)) == R::Queued);
  CHECK(q.push(inter(500)) == R::Queued);
  CHECK(q.span_ms() == 500);
  CHECK(q.push(inter(1040)) == R::Dropped);
  CHECK(q.push(audio(1050)) == R::Queued);
  CHECK(q.push(audio(2990)) == R::Queued);
  CHECK(q.push(audio(3100)) == R::Overflow);

  // Timestamps wrap modulo 2^32; a frame slightly older than the head does not count negative.
  SubscriberQueue w({0, 0, 1000, 3000});
  CHECK(w.push(key(0xFFFFFF00u)) == R::Queued);
  CHECK(w.push(audio(0xFFFFFEF0u)) == R::Queued);
  CHECK(w.push(inter(0x00000100u)) == R::Queued);
  CHECK(w.span_ms() == 0x200);
  CHECK(w.push(audio(0x00000D00u)) == R::Overflow);
}

TEST_CASE("a late joiner's replay (metadata and sequence headers at 0, GOP much later) is not a backlog") {
  SubscriberQueue q({0, 0, 3000, 15000});
  CHECK(q.push(metadata(0)) == R::Queued);
  CHECK(q.push(video_seq(0)) == R::Queued);
  CHECK(q.push(frame(mt::kAudio, 0, {0xaf, 0, 0x12, 0x10})) == R::Queued);
  CHECK(q.push(key(60000)) == R::Queued);
  for (uint32_t ts = 60040; ts < 61900; ts += 40) CHECK(q.push(inter(ts)) == R::Queued);
  CHECK(q.dropped_frames() == 0);
  CHECK(q.span_ms() == 1880);
  // Real backlog still counts from the first media frame.
  CHECK(q.push(inter(63100)) == R::Dropped);
  CHECK(q.push(audio(76000)) == R::Overflow);
}

TEST_CASE("pop_batch honours frame and byte budgets") {
  SubscriberQueue q({0, 0, 0, 0});
  std::vector<FramePtr> sent;
  for (uint32_t i = 0; i < 200; ++i) {  // past the initial ring size: growth keeps order
    sent.push_back(audio(i, 10 + i % 7));
    CHECK(q.push(sent.back()) == R::Queued);
    if (i == 50) {  // pop a few so that the ring wraps before it grows
      std::vector<FramePtr> first;
      q.pop_batch(first, 5, UINT64_MAX);
      CHECK(first == std::vector<FramePtr>(sent.begin(), sent.begin() + 5));
    }
  }
  std::vector<FramePtr> out;
  q.pop_batch(out, 3, UINT64_MAX);
  CHECK(out.size() == 3);
  CHECK(out[0] == sent[5]);
  q.pop_batch(out, 100, 25);  // appends; 2 frames of 10..16 bytes fit in 25 at most
  CHECK(out.size() >= 4);
  CHECK(out.size() <= 5);
  const size_t taken = out.size();
  q.pop_batch(out, 100, 1);  // at least one frame, whatever its size
  CHECK(out.size() == taken + 1);
  auto rest = drain(q);
  out.insert(out.end(), rest.begin(), rest.end());
  CHECK(out == std::vector<FramePtr>(sent.begin() + 5, sent.end()));
  CHECK(q.bytes() == 0);

  q.push(audio(0));
  q.clear();
  CHECK(q.empty());
  CHECK(q.bytes() == 0);
}
