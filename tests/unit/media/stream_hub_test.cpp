// StreamHub and GopCache with fake subscribers: replay order, publish sessions, refcounts,
// removal during fan-out and replay, GOP caps and the audio-only window.
#include <doctest/doctest.h>

#include <functional>
#include <string>
#include <vector>

#include "media/gop_cache.hpp"
#include "media/stream_hub.hpp"
#include "protocol/message.hpp"

using namespace sluice;
using namespace sluice::media;
using sluice::Slice;
namespace mt = sluice::protocol::msg_type;
using Bytes = std::vector<uint8_t>;

namespace {

Bytes amf0_string(std::string_view s) {
  Bytes out{0x02, uint8_t(s.size() >> 8), uint8_t(s.size())};
  out.insert(out.end(), s.begin(), s.end());
  return out;
}

FramePtr frame(uint8_t type, uint32_t ts, Bytes b) { return make_frame(type, ts, Slice::adopt(std::move(b))); }
FramePtr meta(uint32_t ts = 0) {
  Bytes b = amf0_string("@setDataFrame");
  Bytes m = amf0_string("onMetaData");
  b.insert(b.end(), m.begin(), m.end());
  b.push_back(0x05);
  return frame(mt::kDataAmf0, ts, b);
}
FramePtr video_seq(uint8_t variant = 0) { return frame(mt::kVideo, 0, {0x17, 0, 0, 0, 0, 1, 0x64, 0, variant}); }
FramePtr audio_seq() { return frame(mt::kAudio, 0, {0xaf, 0, 0x12, 0x10}); }
FramePtr key(uint32_t ts, size_t size = 8) {
  Bytes b(size, 0x11);
  b[0] = 0x17;
  b[1] = 1;
  return frame(mt::kVideo, ts, b);
}
FramePtr inter(uint32_t ts, size_t size = 8) {
  Bytes b(size, 0x22);
  b[0] = 0x27;
  b[1] = 1;
  return frame(mt::kVideo, ts, b);
}
FramePtr audio(uint32_t ts) { return frame(mt::kAudio, ts, {0xaf, 1, 0x21, 0x00}); }
// E-RTMP OneTrack multitrack AVC sequence start for `track`.
FramePtr track_seq(uint8_t track) { return frame(mt::kVideo, 0, {0x96, 0x00, 'a', 'v', 'c', '1', track, 1, 0x64}); }

struct FakeSubscriber : Subscriber {
  std::vector<FramePtr> frames;
  int starts = 0;
  int ends = 0;
  std::function<void(FakeSubscriber&, const FramePtr&)> hook;

  void on_frame(const FramePtr& f) override {
    frames.push_back(f);
    if (hook) hook(*this, f);
  }
  void on_publish_start() override { ++starts; }
  void on_publish_end() override { ++ends; }
};

}  // namespace

TEST_CASE("late joiner gets metadata, sequence headers, then the GOP from its key frame") {
  StreamHub hub("live/a");
  hub.start_publish();
  std::vector<FramePtr> sent = {video_seq(), audio_seq(), key(0),  audio(10), inter(40),
                                meta(),      audio(33),   key(80), audio(56), inter(120)};
  FakeSubscriber early;
  hub.add_subscriber(&early);
  for (const auto& f : sent) hub.publish(f);
  CHECK(early.frames == sent);

  FakeSubscriber late;
  hub.add_subscriber(&late);
  // meta() is index 5, the current GOP starts at key(80), index 7.
  const std::vector<FramePtr> want = {sent[5], sent[0], sent[1], sent[7], sent[8], sent[9]};
  CHECK(late.frames == want);
  CHECK(late.starts == 0);

  auto next = inter(160);
  hub.publish(next);
  CHECK(late.frames.back() == next);
  CHECK(late.frames.size() == want.size() + 1);
  CHECK(hub.subscriber_count() == 2);
  CHECK(hub.gop_frames() == 4);
  CHECK(hub.frames_in() == sent.size() + 1);

  // Adding twice is a no-op.
  hub.add_subscriber(&late);
  CHECK(hub.subscriber_count() == 2);
  CHECK(late.frames.size() == want.size() + 1);
}

TEST_CASE("metadata is relayed without @setDataFrame and replaces the previous one") {
  StreamHub hub("live/m");
  hub.start_publish();
  auto m1 = meta();
  auto m2 = meta(100);
  hub.publish(m1);
  hub.publish(m2);
  CHECK(hub.metadata() == m2);
  CHECK(m2->payload[0] == 0x02);
  CHECK(m2->payload[2] == 10);  // "onMetaData" is first now
}

TEST_CASE("sequence headers are kept per kind and track and replayed video first") {
  StreamHub hub("live/t");
  hub.start_publish();
  auto a = audio_seq();
  auto v0 = video_seq();
  auto v1 = track_seq(1);
  auto v1b = track_seq(1);
  hub.publish(a);
  hub.publish(v0);
  hub.publish(v1);
  hub.publish(v1b);  // same kind and track: replaces v1
  CHECK(hub.sequence_headers().size() == 3);
  FakeSubscriber s;
  hub.add_subscriber(&s);
  CHECK(s.frames == std::vector<FramePtr>{v0, v1b, a});
}

TEST_CASE("a changed sequence header drops the GOP until the next key frame") {
  StreamHub hub("live/c");
  hub.start_publish();
  hub.publish(video_seq(1));
  hub.publish(key(0));
  hub.publish(inter(40));
  hub.publish(video_seq(1));  // identical bytes: not a change
  CHECK(hub.gop_frames() == 2);
  hub.publish(video_seq(2));
  CHECK(hub.gop_frames() == 0);
  hub.publish(inter(80));
  CHECK(hub.gop_frames() == 0);
  hub.publish(key(120));
  CHECK(hub.gop_frames() == 1);
}

TEST_CASE("publish end and start") {
  StreamHub hub("live/p");
  FakeSubscriber s;
  hub.add_subscriber(&s);
  CHECK_FALSE(hub.has_publisher());
  hub.publish(key(0));  // ignored: no publisher
  CHECK(s.frames.empty());
  CHECK(hub.frames_in() == 0);

  hub.start_publish();
  CHECK(s.starts == 1);
  hub.publish(meta());
  hub.publish(video_seq());
  hub.publish(key(0));
  CHECK(hub.info().video_codec == "H264");
  hub.end_publish();
  CHECK(s.ends == 1);
  CHECK_FALSE(hub.has_publisher());
  CHECK(hub.subscriber_count() == 1);
  CHECK(hub.metadata() == nullptr);
  CHECK(hub.sequence_headers().empty());
  CHECK(hub.gop_frames() == 0);
  CHECK_FALSE(hub.info().has_video());
  hub.end_publish();  // twice is harmless
  CHECK(s.ends == 1);

  FakeSubscriber idle;
  hub.add_subscriber(&idle);
  CHECK(idle.frames.empty());

  hub.start_publish();
  CHECK(s.starts == 2);
  CHECK(idle.starts == 1);
  auto k = key(1000);
  hub.publish(k);
  CHECK(s.frames.back() == k);
  CHECK(idle.frames == std::vector<FramePtr>{k});

  // Republish without an end: caches of the old session are dropped.
  hub.start_publish();
  CHECK(hub.gop_frames() == 0);
  CHECK(hub.stats().publish_sessions == 3);
}

TEST_CASE("payload refcounts return to 1 once subscribers drop their frames") {
  Slice payload = Slice::copy_of(Bytes{0x17, 1, 0, 0, 0, 9, 9, 9});
  Slice seq = Slice::copy_of(Bytes{0x17, 0, 0, 0, 0, 1, 0x64, 0, 0x1f});
  {
    StreamHub hub("live/r");
    hub.start_publish();
    FakeSubscriber a, b, c;
    hub.add_subscriber(&a);
    hub.add_subscriber(&b);
    hub.publish(make_frame(mt::kVideo, 0, seq.share()));
    hub.publish(make_frame(mt::kVideo, 0, payload.share()));
    hub.add_subscriber(&c);           // replayed from the caches
    CHECK(payload.use_count() == 2);  // one Frame, however many subscribers hold it
    CHECK(a.frames[1].get() == c.frames[1].get());
    hub.remove_subscriber(&a);
    hub.remove_subscriber(&b);
    hub.remove_subscriber(&c);
    a.frames.clear();
    b.frames.clear();
    c.frames.clear();
    CHECK(payload.use_count() == 2);  // still in the GOP cache
    hub.end_publish();
    CHECK(payload.use_count() == 1);
    CHECK(seq.use_count() == 1);
  }
  CHECK(payload.use_count() == 1);
}

TEST_CASE("removal during fan-out") {
  StreamHub hub("live/x");
  hub.start_publish();
  FakeSubscriber a, b, c, d;
  a.hook = [&](FakeSubscriber& self, const FramePtr&) { hub.remove_subscriber(&self); };
  b.hook = [&](FakeSubscriber&, const FramePtr&) { hub.remove_subscriber(&c); };
  for (auto* s : {&a, &b, &c, &d}) hub.add_subscriber(s);
  auto f1 = inter(0);
  hub.publish(f1);
  CHECK(a.frames.size() == 1);
  CHECK(b.frames.size() == 1);
  CHECK(c.frames.empty());  // removed before its turn
  CHECK(d.frames.size() == 1);
  CHECK(hub.subscriber_count() == 2);

  b.hook = nullptr;
  hub.publish(inter(40));
  CHECK(a.frames.size() == 1);
  CHECK(b.frames.size() == 2);
  CHECK(d.frames.size() == 2);

  // Everyone leaves during one fan-out.
  b.hook = [&](FakeSubscriber& self, const FramePtr&) { hub.remove_subscriber(&self); };
  d.hook = b.hook;
  hub.publish(inter(80));
  CHECK(hub.subscriber_count() == 0);
  hub.publish(inter(120));
  CHECK(b.frames.size() == 3);
}

TEST_CASE("adding a subscriber during fan-out replays once, without duplicates") {
  StreamHub hub("live/y");
  hub.start_publish();
  FakeSubscriber host, guest;
  host.hook = [&](FakeSubscriber&, const FramePtr&) { hub.add_subscriber(&guest); };
  hub.add_subscriber(&host);
  auto k = key(0);
  hub.publish(k);
  CHECK(guest.frames == std::vector<FramePtr>{k});  // via replay, not again via fan-out
  host.hook = nullptr;
  auto i = inter(40);
  hub.publish(i);
  CHECK(guest.frames == std::vector<FramePtr>{k, i});
}

TEST_CASE("removal during replay stops the replay") {
  StreamHub hub("live/z");
  hub.start_publish();
  hub.publish(meta());
  hub.publish(video_seq());
  hub.publish(key(0));
  hub.publish(inter(40));
  FakeSubscriber s;
  s.hook = [&](FakeSubscriber& self, const FramePtr&) {
    if (self.frames.size() == 2) hub.remove_subscriber(&self);
  };
  hub.add_subscriber(&s);
  CHECK(s.frames.size() == 2);
  CHECK(hub.subscriber_count() == 0);
  hub.publish(inter(80));
  CHECK(s.frames.size() == 2);
}

TEST_CASE("GOP cache caps") {
  SUBCASE("frames") {
    StreamHub::Options o;
    o.gop_max_frames = 5;
    StreamHub hub("live/g", o);
    hub.start_publish();
    hub.publish(video_seq());
    hub.publish(key(0));
    for (uint32_t i = 1; i <= 4; ++i) hub.publish(inter(i * 40));
    CHECK(hub.gop_frames() == 5);
    hub.publish(inter(200));  // sixth: over the cap, dropped until the next key frame
    CHECK(hub.gop_frames() == 0);
    hub.publish(inter(240));
    CHECK(hub.gop_frames() == 0);
    FakeSubscriber s;
    hub.add_subscriber(&s);
    CHECK(s.frames.size() == 1);  // just the sequence header
    hub.publish(key(280));
    CHECK(hub.gop_frames() == 1);
  }
  SUBCASE("bytes") {
    StreamHub::Options o;
    o.gop_max_bytes = 1000;
    StreamHub hub("live/g", o);
    hub.start_publish();
    hub.publish(key(0, 400));
    hub.publish(inter(40, 400));
    CHECK(hub.gop_bytes() == 800);
    hub.publish(inter(80, 400));
    CHECK(hub.gop_bytes() == 0);
    hub.publish(key(120, 400));
    CHECK(hub.gop_bytes() == 400);
  }
  SUBCASE("disabled") {
    StreamHub::Options o;
    o.gop_cache = false;
    StreamHub hub("live/g", o);
    hub.start_publish();
    hub.publish(video_seq());
    hub.publish(key(0));
    FakeSubscriber s;
    hub.add_subscriber(&s);
    CHECK(s.frames.size() == 1);
  }
}

TEST_CASE("GopCache: nothing before the first key frame, audio rides along") {
  GopCache gop(GopCache::Limits{});
  gop.push(audio(0));
  CHECK(gop.frame_count() == 1);  // audio-only so far: the window
  gop.push(inter(10));            // video appears: wait for a key frame
  CHECK(gop.video_seen());
  CHECK(gop.frame_count() == 0);
  gop.push(audio(20));
  CHECK(gop.frame_count() == 0);
  gop.push(key(40));
  gop.push(audio(43));
  gop.push(video_seq());  // never cached here
  CHECK(gop.frame_count() == 2);
  // A key frame of another track does not start a GOP.
  gop.push(frame(mt::kVideo, 50, {0x96, 0x03, 'a', 'v', 'c', '1', 1, 0x65}));
  CHECK(gop.frame_count() == 3);
  gop.clear();
  CHECK_FALSE(gop.video_seen());
  CHECK(gop.bytes() == 0);
}

TEST_CASE("audio-only streams keep a sliding window of recent audio") {
  StreamHub::Options o;
  o.audio_only_frames = 10;
  StreamHub hub("live/audio", o);
  hub.start_publish();
  auto seq = audio_seq();
  hub.publish(seq);
  std::vector<FramePtr> sent;
  for (uint32_t i = 0; i < 25; ++i) {
    sent.push_back(audio(i * 23));
    hub.publish(sent.back());
  }
  CHECK(hub.gop_frames() == 10);
  FakeSubscriber s;
  hub.add_subscriber(&s);
  REQUIRE(s.frames.size() == 11);
  CHECK(s.frames[0] == seq);
  CHECK(s.frames[1] == sent[15]);
  CHECK(s.frames[10] == sent[24]);

  StreamHub::Options none;
  none.audio_only_frames = 0;
  StreamHub quiet("live/quiet", none);
  quiet.start_publish();
  quiet.publish(audio(0));
  CHECK(quiet.gop_frames() == 0);
}

TEST_CASE("stats and codec info") {
  StreamHub hub("live/s");
  hub.start_publish();
  hub.publish(video_seq());
  hub.publish(audio_seq());
  hub.publish(key(0, 100));
  hub.publish(audio(10));
  hub.publish(meta());
  const auto& st = hub.stats();
  CHECK(st.frames_in == 5);
  CHECK(st.video_frames_in == 2);
  CHECK(st.audio_frames_in == 2);
  CHECK(st.data_frames_in == 1);
  CHECK(st.keyframes_in == 1);
  CHECK(hub.bytes_in() == 9 + 4 + 100 + 4 + hub.metadata()->payload.size());
  CHECK(hub.info().audio_codec == "AAC");
  CHECK(hub.info().sample_rate == 44100);
  CHECK(hub.name() == "live/s");
}
