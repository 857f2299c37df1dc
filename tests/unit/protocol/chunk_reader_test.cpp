// ChunkReader: reassembly, header compression, extended timestamps (both conventions), control
// messages and limits. Streams are built byte by byte here, independently of ChunkWriter.
#include "protocol/chunk_reader.hpp"

#include <doctest/doctest.h>

#include <functional>
#include <random>
#include <string>
#include <vector>

using namespace sluice;
using namespace sluice::protocol;

namespace {

using Bytes = std::vector<uint8_t>;

void u24(Bytes& b, uint32_t v) {
  b.push_back(uint8_t(v >> 16));
  b.push_back(uint8_t(v >> 8));
  b.push_back(uint8_t(v));
}
void u32be(Bytes& b, uint32_t v) {
  b.push_back(uint8_t(v >> 24));
  u24(b, v & 0xFFFFFF);
}
void u32le(Bytes& b, uint32_t v) {
  for (int i = 0; i < 4; ++i) b.push_back(uint8_t(v >> (8 * i)));
}
void basic(Bytes& b, uint8_t fmt, uint32_t csid) {
  const auto high = uint8_t(fmt << 6);
  if (csid < 64) {
    b.push_back(uint8_t(high | csid));
  } else if (csid < 320) {
    b.push_back(high);
    b.push_back(uint8_t(csid - 64));
  } else {
    b.push_back(uint8_t(high | 1));
    b.push_back(uint8_t((csid - 64) & 0xFF));
    b.push_back(uint8_t((csid - 64) >> 8));
  }
}
// Timestamp field plus, when needed, the extended field is appended by the caller via ts_ext().
void ts_field(Bytes& b, uint32_t v) { u24(b, v >= 0xFFFFFF ? 0xFFFFFF : v); }
void ts_ext(Bytes& b, uint32_t v) {
  if (v >= 0xFFFFFF) u32be(b, v);
}
void fmt0(Bytes& b, uint32_t csid, uint32_t ts, uint32_t len, uint8_t type, uint32_t msid) {
  basic(b, 0, csid);
  ts_field(b, ts);
  u24(b, len);
  b.push_back(type);
  u32le(b, msid);
  ts_ext(b, ts);
}
void fmt1(Bytes& b, uint32_t csid, uint32_t delta, uint32_t len, uint8_t type) {
  basic(b, 1, csid);
  ts_field(b, delta);
  u24(b, len);
  b.push_back(type);
  ts_ext(b, delta);
}
void fmt2(Bytes& b, uint32_t csid, uint32_t delta) {
  basic(b, 2, csid);
  ts_field(b, delta);
  ts_ext(b, delta);
}
void fmt3(Bytes& b, uint32_t csid) { basic(b, 3, csid); }
void put(Bytes& b, const Bytes& payload, size_t from, size_t n) {
  b.insert(b.end(), payload.begin() + long(from), payload.begin() + long(from + n));
}
Bytes pattern(size_t n, uint8_t seed) {
  Bytes p(n);
  for (size_t i = 0; i < n; ++i) p[i] = uint8_t(seed * 31 + i * 7 + (i >> 8));
  return p;
}

struct Expected {
  uint32_t csid;
  uint8_t type;
  uint32_t timestamp;
  uint32_t stream_id;
  Bytes payload;
};

void check_messages(const std::vector<Message>& got, const std::vector<Expected>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i);
    CHECK(got[i].csid == want[i].csid);
    CHECK(int(got[i].type) == int(want[i].type));
    CHECK(got[i].timestamp == want[i].timestamp);
    CHECK(got[i].stream_id == want[i].stream_id);
    CHECK(Bytes(got[i].payload.span().begin(), got[i].payload.span().end()) == want[i].payload);
  }
}

// Ways to cut one byte stream into feed() calls.
enum class Split { Whole, ByteAtATime, Random };

struct FeedResult {
  std::vector<Message> messages;
  Result<void> status;
};

FeedResult feed_split(const Bytes& stream, Split split, uint32_t seed = 1, ChunkReaderLimits limits = {}) {
  ChunkReader reader(limits);
  FeedResult r;
  std::mt19937 rng(seed);
  size_t pos = 0;
  while (pos < stream.size() && r.status) {
    size_t n = stream.size() - pos;
    if (split == Split::ByteAtATime) n = 1;
    if (split == Split::Random) n = std::min<size_t>(n, std::uniform_int_distribution<size_t>(0, 40)(rng));
    r.status = reader.feed(std::span(stream).subspan(pos, n), r.messages);
    pos += n;
  }
  if (r.status) CHECK(reader.bytes_received() == stream.size());
  return r;
}

// Feeds the stream whole, byte at a time and in 50 random splits; all must give `want`.
void check_all_splits(const Bytes& stream, const std::vector<Expected>& want, ChunkReaderLimits limits = {}) {
  {
    INFO("whole");
    auto r = feed_split(stream, Split::Whole, 1, limits);
    REQUIRE(r.status);
    check_messages(r.messages, want);
  }
  {
    INFO("byte at a time");
    auto r = feed_split(stream, Split::ByteAtATime, 1, limits);
    REQUIRE(r.status);
    check_messages(r.messages, want);
  }
  for (uint32_t seed = 1; seed <= 50; ++seed) {
    INFO("random split seed " << seed);
    auto r = feed_split(stream, Split::Random, seed, limits);
    REQUIRE(r.status);
    check_messages(r.messages, want);
  }
}

Bytes u32_payload(uint32_t v) {
  Bytes b;
  u32be(b, v);
  return b;
}

void set_chunk_size(Bytes& s, std::vector<Expected>* want, uint32_t size) {
  fmt0(s, 2, 0, 4, 1, 0);
  u32be(s, size);
  if (want) want->push_back({2, 1, 0, 0, u32_payload(size)});
}

Error feed_expect_error(const Bytes& stream, ChunkReaderLimits limits = {}) {
  ChunkReader reader(limits);
  std::vector<Message> out;
  auto r = reader.feed(stream, out);
  REQUIRE_FALSE(r);
  CHECK(reader.failed());
  // A failed reader stays failed.
  auto again = reader.feed(Bytes{0x02}, out);
  CHECK_FALSE(again);
  CHECK(again.error().code == r.error().code);
  return r.error();
}

}  // namespace

TEST_CASE("multi-message stream: any split gives identical messages") {
  Bytes s;
  std::vector<Expected> want;
  // A 200-byte command on csid 3 (two chunks at size 128) interleaved with audio on csid 4.
  const Bytes p1 = pattern(200, 1);
  const Bytes p2 = pattern(10, 2);
  fmt0(s, 3, 1000, 200, 20, 0);
  put(s, p1, 0, 128);
  fmt0(s, 4, 1000, 10, 8, 1);
  put(s, p2, 0, 10);
  want.push_back({4, 8, 1000, 1, p2});
  fmt3(s, 3);
  put(s, p1, 128, 72);
  want.push_back({3, 20, 1000, 0, p1});
  // fmt 2 starts a message with a new delta; fmt 3 starts one adding that delta again.
  const Bytes p3 = pattern(10, 3);
  fmt2(s, 4, 23);
  put(s, p3, 0, 10);
  want.push_back({4, 8, 1023, 1, p3});
  const Bytes p4 = pattern(10, 4);
  fmt3(s, 4);
  put(s, p4, 0, 10);
  want.push_back({4, 8, 1046, 1, p4});
  // fmt 1 on a fresh csid: accepted, timestamp and msid assumed zero (librtmp pings do this).
  fmt1(s, 6, 5, 3, 9);
  put(s, pattern(3, 5), 0, 3);
  want.push_back({6, 9, 5, 0, pattern(3, 5)});
  // 2- and 3-byte basic headers, and a zero-length message.
  fmt0(s, 64, 7, 1, 18, 1);
  s.push_back(0x42);
  want.push_back({64, 18, 7, 1, {0x42}});
  fmt0(s, 320, 8, 0, 9, 1);
  want.push_back({320, 9, 8, 1, {}});
  fmt0(s, 65599, 9, 2, 8, 5);
  put(s, pattern(2, 6), 0, 2);
  want.push_back({65599, 8, 9, 5, pattern(2, 6)});
  // Set Chunk Size 4096: the next message is one 300-byte chunk.
  set_chunk_size(s, &want, 4096);
  const Bytes p5 = pattern(300, 7);
  fmt0(s, 5, 2000, 300, 9, 1);
  put(s, p5, 0, 300);
  want.push_back({5, 9, 2000, 1, p5});
  // fmt 3 right after fmt 0 adds the fmt-0 timestamp again (spec: the delta after fmt 0).
  fmt3(s, 5);
  put(s, p5, 0, 300);
  want.push_back({5, 9, 4000, 1, p5});
  // Chunk size 1: five chunks for a five-byte message, then back to 128 with a Set Chunk Size
  // whose own four payload bytes arrive in four chunks.
  set_chunk_size(s, &want, 1);
  const Bytes p6 = pattern(5, 8);
  fmt1(s, 3, 10, 5, 20);
  for (size_t i = 0; i < 5; ++i) {
    if (i) fmt3(s, 3);
    s.push_back(p6[i]);
  }
  want.push_back({3, 20, 1010, 0, p6});
  fmt0(s, 2, 0, 4, 1, 0);
  const Bytes size128 = u32_payload(128);
  for (size_t i = 0; i < 4; ++i) {
    if (i) fmt3(s, 2);
    s.push_back(size128[i]);
  }
  want.push_back({2, 1, 0, 0, size128});
  const Bytes p7 = pattern(129, 9);
  fmt0(s, 3, 3000, 129, 20, 0);
  put(s, p7, 0, 128);
  fmt3(s, 3);
  put(s, p7, 128, 1);
  want.push_back({3, 20, 3000, 0, p7});

  check_all_splits(s, want);
}

TEST_CASE("interleaved messages across many csids") {
  Bytes s;
  std::vector<Expected> want;
  const std::vector<uint32_t> csids = {3, 4, 63, 64, 100, 319, 320, 5000, 65599};
  std::vector<Bytes> payloads;
  for (size_t i = 0; i < csids.size(); ++i) {
    payloads.push_back(pattern(128 * 3, uint8_t(i)));
    fmt0(s, csids[i], uint32_t(i * 10), 128 * 3, 9, 1);
    put(s, payloads[i], 0, 128);
  }
  for (size_t chunk = 1; chunk < 3; ++chunk) {
    for (size_t i = 0; i < csids.size(); ++i) {
      fmt3(s, csids[i]);
      put(s, payloads[i], chunk * 128, 128);
      if (chunk == 2) want.push_back({csids[i], 9, uint32_t(i * 10), 1, payloads[i]});
    }
  }
  check_all_splits(s, want);
}

TEST_CASE("timestamps wrap modulo 2^32") {
  Bytes s;
  fmt0(s, 4, 0xFFFFFFF0u, 1, 8, 1);
  s.push_back(1);
  fmt2(s, 4, 0x20);
  s.push_back(2);
  fmt3(s, 4);
  s.push_back(3);
  check_all_splits(s, {{4, 8, 0xFFFFFFF0u, 1, {1}}, {4, 8, 0x10, 1, {2}}, {4, 8, 0x30, 1, {3}}});
}

TEST_CASE("fmt 2 on a fresh csid assumes zeros") {
  Bytes s;
  fmt2(s, 7, 12);
  check_all_splits(s, {{7, 0, 12, 0, {}}});
}

TEST_CASE("fmt 3 on a fresh csid is malformed") {
  Bytes s;
  fmt3(s, 5);
  s.push_back(0);
  CHECK(feed_expect_error(s).code == Errc::Malformed);
}

TEST_CASE("a new header interrupting a partial message discards it") {
  for (uint8_t fmt : {0, 1, 2}) {
    CAPTURE(int(fmt));
    Bytes s;
    fmt0(s, 3, 100, 200, 20, 0);
    put(s, pattern(200, 1), 0, 128);
    if (fmt == 0) fmt0(s, 3, 500, 5, 20, 0);
    if (fmt == 1) fmt1(s, 3, 400, 5, 20);
    if (fmt == 2) {
      // Same length as the abandoned message: 200 bytes in two chunks.
      fmt2(s, 3, 400);
      put(s, pattern(200, 2), 0, 128);
      fmt3(s, 3);
      put(s, pattern(200, 2), 128, 72);
      check_all_splits(s, {{3, 20, 500, 0, pattern(200, 2)}});
      continue;
    }
    put(s, pattern(5, 2), 0, 5);
    check_all_splits(s, {{3, 20, 500, 0, pattern(5, 2)}});

    ChunkReader reader;
    std::vector<Message> out;
    Bytes partial;
    fmt0(partial, 3, 100, 200, 20, 0);
    put(partial, pattern(200, 1), 0, 128);
    REQUIRE(reader.feed(partial, out));
    CHECK(reader.buffered_bytes() == 128);
    REQUIRE(reader.feed(std::span(s).subspan(partial.size()), out));
    CHECK(reader.buffered_bytes() == 0);
    CHECK(reader.reserved_bytes() == 0);
  }
}

// ---- Extended timestamps -------------------------------------------------------------------

namespace {

constexpr uint32_t kT = 0x01000005;  // needs the extended field

enum class Style { FFmpeg, Librtmp };

// One message on `csid`, written with fmt 0 and continuation chunks (chunk size 128) that carry
// the extended field (FFmpeg, OBS >= 2024, SRS) or not (librtmp 2.4).
void ext_message(Bytes& s, Style style, uint32_t csid, uint32_t ts, const Bytes& payload, uint32_t msid = 1) {
  fmt0(s, csid, ts, uint32_t(payload.size()), 9, msid);
  size_t pos = std::min<size_t>(128, payload.size());
  put(s, payload, 0, pos);
  while (pos < payload.size()) {
    fmt3(s, csid);
    if (style == Style::FFmpeg) u32be(s, ts);
    const size_t n = std::min<size_t>(128, payload.size() - pos);
    put(s, payload, pos, n);
    pos += n;
  }
}

Bytes with_prefix(Bytes p, size_t at, uint32_t v) {
  p[at] = uint8_t(v >> 24);
  p[at + 1] = uint8_t(v >> 16);
  p[at + 2] = uint8_t(v >> 8);
  p[at + 3] = uint8_t(v);
  return p;
}

}  // namespace

TEST_CASE("extended timestamp on fmt 0 and fmt 1") {
  Bytes s;
  fmt0(s, 4, kT, 2, 9, 1);
  put(s, pattern(2, 1), 0, 2);
  fmt1(s, 4, 0x02000000, 3, 9);  // extended delta: added to the previous timestamp
  put(s, pattern(3, 2), 0, 3);
  fmt2(s, 4, 0xFFFFFF);  // exactly the marker value is extended too
  put(s, pattern(3, 3), 0, 3);
  check_all_splits(s, {{4, 9, kT, 1, pattern(2, 1)},
                       {4, 9, kT + 0x02000000, 1, pattern(3, 2)},
                       {4, 9, kT + 0x02000000 + 0xFFFFFF, 1, pattern(3, 3)}});
}

TEST_CASE("extended timestamp, FFmpeg convention: field on every continuation") {
  Bytes s;
  std::vector<Expected> want;
  const Bytes a = pattern(300, 1);
  ext_message(s, Style::FFmpeg, 4, kT, a);
  want.push_back({4, 9, kT, 1, a});
  // After lock-in, payload that itself starts with the timestamp bytes right after the field.
  const Bytes b = with_prefix(with_prefix(pattern(300, 2), 128, kT + 40), 256, kT + 40);
  ext_message(s, Style::FFmpeg, 4, kT + 40, b);
  want.push_back({4, 9, kT + 40, 1, b});
  // fmt 1 with an extended delta, continuation carries the delta (FFmpeg writes the value of the
  // first header), then a fmt-3 new message: the field is present and the delta added again.
  const uint32_t d = 0x01000000;
  const Bytes c = pattern(200, 3);
  fmt1(s, 4, d, 200, 9);
  put(s, c, 0, 128);
  fmt3(s, 4);
  u32be(s, d);
  put(s, c, 128, 72);
  want.push_back({4, 9, kT + 40 + d, 1, c});
  fmt3(s, 4);
  u32be(s, d);
  put(s, c, 0, 128);
  fmt3(s, 4);
  u32be(s, d);
  put(s, c, 128, 72);
  want.push_back({4, 9, kT + 40 + 2 * d, 1, c});
  check_all_splits(s, want);
  ChunkReaderLimits always;
  always.ext_ts = ExtendedTimestampOnType3::Always;
  check_all_splits(s, want, always);
}

TEST_CASE("extended timestamp, librtmp convention: no field on continuations") {
  Bytes s;
  std::vector<Expected> want;
  const Bytes a = pattern(300, 1);
  ext_message(s, Style::Librtmp, 4, kT, a);
  want.push_back({4, 9, kT, 1, a});
  // After lock-in, a continuation whose payload starts with exactly the timestamp stays payload.
  const Bytes b = with_prefix(with_prefix(pattern(300, 2), 128, kT + 40), 256, kT + 40);
  ext_message(s, Style::Librtmp, 4, kT + 40, b);
  want.push_back({4, 9, kT + 40, 1, b});
  // Same on another csid.
  const Bytes c = with_prefix(pattern(140, 3), 128, kT);
  ext_message(s, Style::Librtmp, 6, kT, c);
  want.push_back({6, 9, kT, 1, c});
  check_all_splits(s, want);
  ChunkReaderLimits never;
  never.ext_ts = ExtendedTimestampOnType3::Never;
  check_all_splits(s, want, never);
}

TEST_CASE("extended timestamp, librtmp convention: short continuation decided across the next header") {
  // 130 bytes: the continuation holds two payload bytes that match the start of the timestamp, so
  // the 4-byte peek runs into the next chunk header before it can tell.
  Bytes s;
  Bytes a = pattern(130, 1);
  a[128] = uint8_t(kT >> 24);
  a[129] = uint8_t(kT >> 16);
  ext_message(s, Style::Librtmp, 4, kT, a);
  const Bytes b = pattern(5, 2);
  fmt0(s, 4, 7, 5, 8, 1);
  put(s, b, 0, 5);
  check_all_splits(s, {{4, 9, kT, 1, a}, {4, 8, 7, 1, b}});
}

TEST_CASE("extended timestamp, librtmp convention decided on a one-byte continuation") {
  Bytes s;
  const Bytes a = pattern(129, 1);
  ext_message(s, Style::Librtmp, 4, kT, a);
  const Bytes b = pattern(3, 2);
  fmt0(s, 3, 1, 3, 20, 0);
  put(s, b, 0, 3);
  check_all_splits(s, {{4, 9, kT, 1, a}, {3, 20, 1, 0, b}});
}

TEST_CASE("extended timestamp: continuation repeating the absolute time after fmt 1 is recognised") {
  // Some writers repeat the message's absolute timestamp rather than the header's delta.
  Bytes s;
  fmt0(s, 4, 10, 1, 9, 1);
  s.push_back(0);
  const uint32_t d = 0x01000000;
  const Bytes c = pattern(200, 3);
  fmt1(s, 4, d, 200, 9);
  put(s, c, 0, 128);
  fmt3(s, 4);
  u32be(s, 10 + d);
  put(s, c, 128, 72);
  check_all_splits(s, {{4, 9, 10, 1, {0}}, {4, 9, 10 + d, 1, c}});
}

TEST_CASE("extended timestamp Never override: a fmt-3 new message has no field") {
  Bytes s;
  const Bytes a = pattern(20, 1);
  fmt0(s, 4, kT, 20, 9, 1);
  put(s, a, 0, 20);
  fmt3(s, 4);
  put(s, a, 0, 20);
  ChunkReaderLimits never;
  never.ext_ts = ExtendedTimestampOnType3::Never;
  check_all_splits(s, {{4, 9, kT, 1, a}, {4, 9, kT + kT, 1, a}}, never);
}

TEST_CASE("extended timestamp overrides really override") {
  // Never on an FFmpeg-style stream takes the repeated field for payload.
  Bytes s;
  const Bytes a = pattern(300, 1);
  ext_message(s, Style::FFmpeg, 4, kT, a);
  ChunkReaderLimits never;
  never.ext_ts = ExtendedTimestampOnType3::Never;
  auto r = feed_split(s, Split::Whole, 1, never);
  const bool same = r.status && r.messages.size() == 1 &&
                    Bytes(r.messages[0].payload.span().begin(), r.messages[0].payload.span().end()) == a;
  CHECK_FALSE(same);
}

// ---- Control messages ------------------------------------------------------------------------

TEST_CASE("Set Chunk Size is applied exactly at the message boundary") {
  Bytes s;
  std::vector<Expected> want;
  const Bytes big = pattern(1000, 1);
  // A message in progress on csid 4 at size 128 ...
  fmt0(s, 4, 0, 1000, 9, 1);
  put(s, big, 0, 128);
  // ... the size changes on csid 2 ...
  set_chunk_size(s, &want, 500);
  // ... and the rest of the message continues with 500-byte chunks.
  fmt3(s, 4);
  put(s, big, 128, 500);
  fmt3(s, 4);
  put(s, big, 628, 372);
  want.push_back({4, 9, 0, 1, big});
  check_all_splits(s, want);

  ChunkReader reader;
  std::vector<Message> out;
  REQUIRE(reader.feed(s, out));
  CHECK(reader.chunk_size() == 500);
}

TEST_CASE("invalid Set Chunk Size values") {
  for (uint32_t v : {0u, 0x80000000u, 0xFFFFFFFFu}) {
    CAPTURE(v);
    Bytes s;
    set_chunk_size(s, nullptr, v);
    CHECK(feed_expect_error(s).code == Errc::BadChunkSize);
  }
  {
    Bytes s;
    set_chunk_size(s, nullptr, 0x7FFFFFFF);  // largest valid value
    ChunkReader reader;
    std::vector<Message> out;
    CHECK(reader.feed(s, out));
    CHECK(reader.chunk_size() == 0x7FFFFFFFu);
  }
  {
    Bytes s;
    set_chunk_size(s, nullptr, 70000);
    ChunkReaderLimits limits;
    limits.max_chunk_size = 65536;
    CHECK(feed_expect_error(s, limits).code == Errc::LimitExceeded);
  }
  {
    Bytes s;
    fmt0(s, 2, 0, 2, 1, 0);
    s.push_back(0);
    s.push_back(1);
    CHECK(feed_expect_error(s).code == Errc::Malformed);
  }
}

TEST_CASE("Abort discards the partial message on that csid") {
  Bytes s;
  std::vector<Expected> want;
  fmt0(s, 4, 100, 300, 9, 1);
  put(s, pattern(300, 1), 0, 128);
  fmt0(s, 2, 0, 4, 2, 0);
  u32be(s, 4);
  want.push_back({2, 2, 0, 0, u32_payload(4)});
  // Aborting a csid with no state is harmless.
  fmt0(s, 2, 0, 4, 2, 0);
  u32be(s, 77);
  want.push_back({2, 2, 0, 0, u32_payload(77)});
  // The next fmt 3 on csid 4 starts a new message (adding the delta again).
  const Bytes p = pattern(300, 2);
  fmt3(s, 4);
  put(s, p, 0, 128);
  fmt3(s, 4);
  put(s, p, 128, 128);
  fmt3(s, 4);
  put(s, p, 256, 44);
  want.push_back({4, 9, 200, 1, p});
  check_all_splits(s, want);

  ChunkReader reader;
  std::vector<Message> out;
  Bytes until_abort(s.begin(), s.begin() + 12 + 128 + 12 + 4);
  REQUIRE(reader.feed(until_abort, out));
  CHECK(reader.buffered_bytes() == 0);
  CHECK(reader.reserved_bytes() == 0);
}

// ---- Limits ----------------------------------------------------------------------------------

TEST_CASE("declared 16 MiB length over the limit fails at the header") {
  Bytes s;
  fmt0(s, 4, 0, 0xFFFFFF, 9, 1);
  ChunkReaderLimits limits;
  limits.max_message_size = 0xFFFFFE;
  CHECK(feed_expect_error(s, limits).code == Errc::LimitExceeded);
  limits.max_message_size = 1u << 20;
  CHECK(feed_expect_error(s, limits).code == Errc::LimitExceeded);
  // Also when a fmt-3 new message inherits the length... which was already refused, and for fmt 1.
  Bytes s1;
  fmt1(s1, 4, 0, 2u << 20, 9);
  CHECK(feed_expect_error(s1, limits).code == Errc::LimitExceeded);
}

TEST_CASE("declared 16 MiB length under the limit with few bytes allocates only what arrived") {
  Bytes s;
  set_chunk_size(s, nullptr, 0x7FFFFFFF);
  fmt0(s, 4, 0, 0xFFFFFF, 9, 1);
  put(s, pattern(10, 1), 0, 10);
  ChunkReader reader;
  std::vector<Message> out;
  REQUIRE(reader.feed(s, out));
  CHECK(reader.buffered_bytes() == 10);
  CHECK(reader.reserved_bytes() <= 64);
  CHECK(out.size() == 1);  // only the Set Chunk Size
}

TEST_CASE("message memory grows with received bytes and ends exactly at the length") {
  Bytes s;
  set_chunk_size(s, nullptr, 65536);
  const Bytes big = pattern(100000, 3);
  fmt0(s, 4, 0, uint32_t(big.size()), 9, 1);
  put(s, big, 0, 65536);
  fmt3(s, 4);
  put(s, big, 65536, big.size() - 65536);
  ChunkReader reader;
  std::vector<Message> out;
  const size_t step = 1000;
  for (size_t pos = 0; pos < s.size(); pos += step) {
    REQUIRE(reader.feed(std::span(s).subspan(pos, std::min(step, s.size() - pos)), out));
    CHECK(reader.reserved_bytes() <= 2 * reader.buffered_bytes() + step);
  }
  REQUIRE(out.size() == 2);
  CHECK(Bytes(out[1].payload.span().begin(), out[1].payload.span().end()) == big);
  CHECK(reader.buffered_bytes() == 0);
  CHECK(reader.reserved_bytes() == 0);
}

TEST_CASE("too many chunk streams") {
  ChunkReaderLimits limits;
  limits.max_chunk_streams = 4;
  Bytes s;
  for (uint32_t csid : {3u, 4u, 400u, 5u}) {
    fmt0(s, csid, 0, 1, 9, 1);
    s.push_back(1);
  }
  {
    ChunkReader reader(limits);
    std::vector<Message> out;
    REQUIRE(reader.feed(s, out));
    CHECK(reader.chunk_stream_count() == 4);
    // Reusing a known csid is fine.
    Bytes again;
    fmt3(again, 400);
    again.push_back(2);
    REQUIRE(reader.feed(again, out));
    CHECK(out.size() == 5);
  }
  fmt0(s, 6, 0, 1, 9, 1);
  s.push_back(1);
  const Error e = feed_expect_error(s, limits);
  CHECK(e.code == Errc::LimitExceeded);
  CHECK(e.context.find("max_chunk_streams") != std::string::npos);
}

TEST_CASE("too many buffered bytes across partial messages") {
  ChunkReaderLimits limits;
  limits.max_buffered_bytes = 1000;
  Bytes s;
  set_chunk_size(s, nullptr, 600);
  fmt0(s, 4, 0, 2000, 9, 1);
  put(s, pattern(600, 1), 0, 600);
  fmt0(s, 5, 0, 2000, 9, 1);
  put(s, pattern(600, 2), 0, 600);
  const Error e = feed_expect_error(s, limits);
  CHECK(e.code == Errc::LimitExceeded);
  CHECK(e.context.find("max_buffered_bytes") != std::string::npos);
}

TEST_CASE("bytes_received counts every byte fed") {
  ChunkReader reader;
  std::vector<Message> out;
  Bytes s;
  fmt0(s, 3, 0, 3, 20, 0);
  REQUIRE(reader.feed(std::span(s).first(5), out));
  CHECK(reader.bytes_received() == 5);
  REQUIRE(reader.feed(std::span(s).subspan(5), out));
  CHECK(reader.bytes_received() == s.size());
  CHECK(out.empty());
  REQUIRE(reader.feed(Bytes{1, 2, 3}, out));
  CHECK(reader.bytes_received() == s.size() + 3);
  CHECK(out.size() == 1);
}

TEST_CASE("error context names the byte offset") {
  Bytes s;
  fmt0(s, 3, 0, 1, 20, 0);
  s.push_back(0);
  fmt3(s, 9);  // fresh csid
  const Error e = feed_expect_error(s);
  CHECK(e.code == Errc::Malformed);
  CHECK(e.context.find("after 14 bytes") != std::string::npos);
}
