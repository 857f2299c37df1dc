// ChunkWriter: header selection, extended timestamps, writer -> reader round trips and the
// shared-body fan-out form.
#include "unit/test_bytes.hpp"
#include "protocol/chunk_writer.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "protocol/chunk_reader.hpp"

using namespace sluice;
using namespace sluice::protocol;

namespace {

using sluice::test::Bytes;
using sluice::test::cat;

Bytes pattern(size_t n, uint8_t seed) {
  Bytes p(n);
  for (size_t i = 0; i < n; ++i) p[i] = uint8_t(seed * 31 + i * 7 + (i >> 8));
  return p;
}

Bytes slice(const Bytes& b, size_t from, size_t n) { return Bytes(b.begin() + long(from), b.begin() + long(from + n)); }

uint8_t fmt_of(const Bytes& wire, size_t at) { return wire[at] >> 6; }

struct Msg {
  uint32_t csid;
  uint8_t type;
  uint32_t timestamp;
  uint32_t stream_id;
  Bytes payload;
};

Bytes u32_payload(uint32_t v) { return {uint8_t(v >> 24), uint8_t(v >> 16), uint8_t(v >> 8), uint8_t(v)}; }

}  // namespace

TEST_CASE("first message: fmt 0 and one-byte continuation headers (hand-written bytes)") {
  ChunkWriter w;
  Bytes out;
  const Bytes p = pattern(200, 1);
  w.write(3, 20, 0, 0, p, out);
  const Bytes want = cat({{0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0xC8, 0x14, 0x00, 0x00, 0x00, 0x00},
                          slice(p, 0, 128),
                          {0xC3},
                          slice(p, 128, 72)});
  CHECK(out == want);
}

TEST_CASE("2- and 3-byte csids in continuation headers") {
  ChunkWriter w;
  Bytes out;
  const Bytes p = pattern(130, 1);
  w.write(320, 9, 5, 1, p, out);
  const Bytes want = cat({{0x01, 0x00, 0x01, 0x00, 0x00, 0x05, 0x00, 0x00, 0x82, 0x09, 0x01, 0x00, 0x00, 0x00},
                          slice(p, 0, 128),
                          {0xC1, 0x00, 0x01},
                          slice(p, 128, 2)});
  CHECK(out == want);
  Bytes out2;
  w.write(64, 9, 5, 1, p, out2);
  CHECK(Bytes(out2.begin() + 13 + 128, out2.begin() + 13 + 128 + 2) == Bytes{0xC0, 0x00});
}

TEST_CASE("header compression follows the per-csid state") {
  ChunkWriter w;
  const Bytes p10 = pattern(10, 1);
  const Bytes p12 = pattern(12, 2);
  auto fmt_for = [&](uint32_t csid, uint8_t type, uint32_t ts, uint32_t msid, const Bytes& p) {
    Bytes out;
    w.write(csid, type, ts, msid, p, out);
    return fmt_of(out, 0);
  };
  CHECK(fmt_for(4, 9, 0, 1, p10) == 0);   // first use
  CHECK(fmt_for(4, 9, 40, 1, p10) == 2);  // only the delta is new (no fmt 3 right after fmt 0)
  CHECK(fmt_for(4, 9, 80, 1, p10) == 3);  // same delta again
  CHECK(fmt_for(4, 9, 120, 1, p10) == 3);
  CHECK(fmt_for(4, 9, 150, 1, p10) == 2);  // delta changed
  CHECK(fmt_for(4, 9, 190, 1, p12) == 1);  // length changed
  CHECK(fmt_for(4, 8, 230, 1, p12) == 1);  // type changed
  CHECK(fmt_for(4, 8, 230, 1, p12) == 2);  // delta 0 differs from 40
  CHECK(fmt_for(4, 8, 230, 1, p12) == 3);
  CHECK(fmt_for(4, 8, 200, 1, p12) == 0);             // time went backwards
  CHECK(fmt_for(4, 8, 240, 2, p12) == 0);             // message stream id changed
  CHECK(fmt_for(5, 8, 240, 2, p12) == 0);             // other csids have their own state
  CHECK(fmt_for(4, 8, 240 + 0xFFFFFF, 2, p12) == 0);  // a delta needing the extended field
  // Forward across the 2^32 wrap is a small delta, not a jump backwards.
  CHECK(fmt_for(6, 8, 0xFFFFFFF0u, 1, p12) == 0);
  Bytes out;
  w.write(6, 8, 0x10, 1, p12, out);
  CHECK(out == cat({{0x86, 0x00, 0x00, 0x20}, p12}));
}

TEST_CASE("fmt 1 and fmt 2 header bytes") {
  ChunkWriter w;
  Bytes out;
  w.write(4, 9, 1000, 1, pattern(3, 1), out);
  out.clear();
  w.write(4, 8, 1033, 1, pattern(5, 2), out);
  CHECK(out == cat({{0x44, 0x00, 0x00, 0x21, 0x00, 0x00, 0x05, 0x08}, pattern(5, 2)}));
  out.clear();
  w.write(4, 8, 1040, 1, pattern(5, 3), out);
  CHECK(out == cat({{0x84, 0x00, 0x00, 0x07}, pattern(5, 3)}));
  out.clear();
  w.write(4, 8, 1047, 1, pattern(5, 4), out);
  CHECK(out == cat({{0xC4}, pattern(5, 4)}));
}

TEST_CASE("extended timestamp on fmt 0 and on every continuation (hand-written bytes)") {
  ChunkWriter w;
  Bytes out;
  const Bytes p = pattern(300, 1);
  w.write(4, 9, 0x01000000, 1, p, out);
  const Bytes want =
      cat({{0x04, 0xFF, 0xFF, 0xFF, 0x00, 0x01, 0x2C, 0x09, 0x01, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00},
           slice(p, 0, 128),
           {0xC4, 0x01, 0x00, 0x00, 0x00},
           slice(p, 128, 128),
           {0xC4, 0x01, 0x00, 0x00, 0x00},
           slice(p, 256, 44)});
  CHECK(out == want);
  // The next message has a small delta: fmt 2 without the extended field.
  out.clear();
  w.write(4, 9, 0x01000021, 1, p, out);
  CHECK(Bytes(out.begin(), out.begin() + 4) == Bytes{0x84, 0x00, 0x00, 0x21});
  CHECK(out[4 + 128] == 0xC4);
  CHECK(out[4 + 128 + 1] == p[128]);
}

TEST_CASE("write appends to the caller's vector") {
  ChunkWriter w;
  Bytes out = {0xAA, 0xBB};
  w.write(3, 20, 0, 0, pattern(4, 1), out);
  CHECK(out.size() == 2 + 12 + 4);
  CHECK(out[0] == 0xAA);
  CHECK(out[1] == 0xBB);
  CHECK(out[2] == 0x03);
}

TEST_CASE("a payload given as head + body is written exactly as the joined payload") {
  // VOD MP4 sends a 5-byte tag prefix and the sample's file bytes without joining them; the
  // split may fall anywhere relative to chunk boundaries, with and without extended timestamps.
  const Bytes payload = pattern(300, 9);
  for (uint32_t timestamp : {40u, 0x01000000u}) {
    for (size_t split :
         {size_t(0), size_t(1), size_t(5), size_t(127), size_t(128), size_t(129), size_t(299), size_t(300)}) {
      ChunkWriter joined(128), parts(128);
      Bytes a, b;
      joined.write(6, 9, timestamp, 1, payload, a);
      parts.write(6, 9, timestamp, 1, slice(payload, 0, split), slice(payload, split, payload.size() - split), b);
      CAPTURE(split);
      CAPTURE(timestamp);
      CHECK(a == b);
      // The header state moved the same way: the next message compresses identically.
      a.clear();
      b.clear();
      joined.write(6, 9, timestamp + 40, 1, payload, a);
      parts.write(6, 9, timestamp + 40, 1, payload, b);
      CHECK(a == b);
    }
  }
}

TEST_CASE("zero-length message is a bare header") {
  ChunkWriter w;
  Bytes out;
  w.write(3, 8, 7, 1, {}, out);
  CHECK(out == Bytes{0x03, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00, 0x08, 0x01, 0x00, 0x00, 0x00});
}

TEST_CASE("set_chunk_size clamps to the valid range") {
  ChunkWriter w;
  CHECK(w.chunk_size() == kDefaultChunkSize);
  w.set_chunk_size(0);
  CHECK(w.chunk_size() == 1);
  w.set_chunk_size(0xFFFFFFFF);
  CHECK(w.chunk_size() == 0x7FFFFFFFu);
  w.set_chunk_size(4096);
  CHECK(w.chunk_size() == 4096);
  CHECK(ChunkWriter(60000).chunk_size() == 60000);
}

namespace {

Msg random_message(std::mt19937& rng, std::vector<uint32_t>& last_ts) {
  static const uint32_t kCsids[] = {3, 4, 5, 63, 64, 319, 320, 65599};
  static const uint8_t kTypes[] = {8, 9, 18, 20, 4, 22};
  Msg m;
  const size_t ci = rng() % std::size(kCsids);
  m.csid = kCsids[ci];
  m.type = kTypes[rng() % std::size(kTypes)];
  m.stream_id = rng() % 4 == 0 ? rng() % 3 : 1;
  switch (rng() % 8) {
    case 0:
      m.timestamp = rng();  // anything, often needs the extended field
      break;
    case 1:
      m.timestamp = last_ts[ci] - rng() % 100;  // backwards
      break;
    case 2:
      m.timestamp = 0xFFFFFF - 2 + rng() % 5;  // around the marker
      break;
    default:
      m.timestamp = last_ts[ci] + (rng() % 3 == 0 ? 40 : rng() % 100);  // usual small deltas, repeats
      break;
  }
  last_ts[ci] = m.timestamp;
  static const size_t kSizes[] = {0, 1, 4, 127, 128, 129, 300, 4096, 4097, 20000, 70000};
  const size_t size = rng() % 3 == 0 ? rng() % 9000 : kSizes[rng() % std::size(kSizes)];
  m.payload.resize(size);
  for (auto& b : m.payload) b = uint8_t(rng());
  return m;
}

// Decodes `wire` with a fresh reader in random splits and checks it gives `sent` back.
void check_decodes_to(const Bytes& wire, const std::vector<Msg>& sent, uint32_t seed) {
  ChunkReader reader;
  std::vector<Message> got;
  std::mt19937 rng(seed);
  size_t pos = 0;
  while (pos < wire.size()) {
    const size_t n = std::min<size_t>(wire.size() - pos, rng() % 3000);
    REQUIRE(reader.feed(std::span(wire).subspan(pos, n), got));
    pos += n;
  }
  REQUIRE(got.size() == sent.size());
  for (size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i);
    REQUIRE(got[i].csid == sent[i].csid);
    REQUIRE(int(got[i].type) == int(sent[i].type));
    REQUIRE(got[i].timestamp == sent[i].timestamp);
    REQUIRE(got[i].stream_id == sent[i].stream_id);
    REQUIRE(Bytes(got[i].payload.span().begin(), got[i].payload.span().end()) == sent[i].payload);
  }
  CHECK(reader.buffered_bytes() == 0);
}

}  // namespace

TEST_CASE("writer -> reader round trip for random messages and chunk sizes") {
  for (uint32_t chunk_size : {1u, 128u, 4096u, 65536u}) {
    for (uint32_t seed = 1; seed <= 3; ++seed) {
      CAPTURE(chunk_size);
      CAPTURE(seed);
      std::mt19937 rng(seed * 7919 + chunk_size);
      ChunkWriter w;
      Bytes wire;
      std::vector<Msg> sent;
      std::vector<uint32_t> last_ts(8, 0);
      // Announce the chunk size with the old one, then switch (what the session does).
      if (chunk_size != kDefaultChunkSize) {
        w.write(2, 1, 0, 0, u32_payload(chunk_size), wire);
        sent.push_back({2, 1, 0, 0, u32_payload(chunk_size)});
        w.set_chunk_size(chunk_size);
      }
      const int count = chunk_size == 1 ? 40 : 120;
      for (int i = 0; i < count; ++i) {
        Msg m = random_message(rng, last_ts);
        w.write(m.csid, m.type, m.timestamp, m.stream_id, m.payload, wire);
        sent.push_back(std::move(m));
      }
      check_decodes_to(wire, sent, seed);
    }
  }
}

TEST_CASE("writer -> reader round trip with chunk size changes mid-stream") {
  std::mt19937 rng(42);
  ChunkWriter w;
  Bytes wire;
  std::vector<Msg> sent;
  std::vector<uint32_t> last_ts(8, 0);
  for (int i = 0; i < 300; ++i) {
    if (rng() % 20 == 0) {
      static const uint32_t kSizes[] = {1, 2, 127, 128, 4096, 60000, 65536, 0x7FFFFFFF};
      const uint32_t size = kSizes[rng() % std::size(kSizes)];
      w.write(2, 1, 0, 0, u32_payload(size), wire);
      sent.push_back({2, 1, 0, 0, u32_payload(size)});
      w.set_chunk_size(size);
      continue;
    }
    Msg m = random_message(rng, last_ts);
    if (m.payload.size() > 5000 && w.chunk_size() < 8) m.payload.resize(5000);
    w.write(m.csid, m.type, m.timestamp, m.stream_id, m.payload, wire);
    sent.push_back(std::move(m));
  }
  check_decodes_to(wire, sent, 3);
}

TEST_CASE("chunk_body inserts fmt-3 basic headers between chunks") {
  const Bytes p = pattern(300, 1);
  ChunkedBody body = chunk_body(p, 4, 128);
  CHECK(body.payload_size == 300);
  CHECK(body.csid == 4);
  CHECK(body.chunk_size == 128);
  const Bytes want = cat({slice(p, 0, 128), {0xC4}, slice(p, 128, 128), {0xC4}, slice(p, 256, 44)});
  CHECK(Bytes(body.bytes.span().begin(), body.bytes.span().end()) == want);

  ChunkedBody wide = chunk_body(p, 400, 128);
  CHECK(wide.bytes.size() == 300 + 2 * 3);
  CHECK(wide.bytes[128] == 0xC1);
  CHECK(wide.bytes[129] == uint8_t((400 - 64) & 0xFF));
  CHECK(wide.bytes[130] == uint8_t((400 - 64) >> 8));

  ChunkedBody empty = chunk_body({}, 4, 128);
  CHECK(empty.bytes.empty());
  CHECK(empty.payload_size == 0);
  CHECK(chunk_body(p, 4, 0).chunk_size == 1);
}

TEST_CASE("write_first_header + body == write() for the same state sequence") {
  for (uint32_t chunk_size : {1u, 128u, 4096u, 65536u}) {
    CAPTURE(chunk_size);
    std::mt19937 rng(chunk_size);
    ChunkWriter shared(chunk_size);
    ChunkWriter plain(chunk_size);
    std::vector<uint32_t> last_ts(8, 0);
    Bytes shared_wire;
    Bytes plain_wire;
    int used_shared = 0;
    int fell_back = 0;
    for (int i = 0; i < (chunk_size == 1 ? 60 : 300); ++i) {
      Msg m = random_message(rng, last_ts);
      ChunkedBody body = chunk_body(m.payload, m.csid, chunk_size);
      uint8_t header[kMaxChunkHeaderSize];
      size_t header_len = 0;
      const size_t before = shared_wire.size();
      if (shared.write_first_header(m.csid, m.type, m.timestamp, m.stream_id, body, header, header_len)) {
        ++used_shared;
        CHECK(header_len <= kMaxChunkHeaderSize);
        shared_wire.insert(shared_wire.end(), header, header + header_len);
        shared_wire.insert(shared_wire.end(), body.bytes.span().begin(), body.bytes.span().end());
      } else {
        ++fell_back;
        shared.write(m.csid, m.type, m.timestamp, m.stream_id, m.payload, shared_wire);
      }
      plain.write(m.csid, m.type, m.timestamp, m.stream_id, m.payload, plain_wire);
      REQUIRE(shared_wire.size() == plain_wire.size());
      REQUIRE(std::equal(shared_wire.begin() + long(before), shared_wire.end(), plain_wire.begin() + long(before)));
    }
    CHECK(used_shared > 0);
    CHECK(fell_back > 0);
  }
}

TEST_CASE("write_first_header refuses bodies it cannot use and leaves the state alone") {
  const Bytes p = pattern(300, 1);
  ChunkWriter w;
  uint8_t header[kMaxChunkHeaderSize];
  size_t header_len = 99;
  // Built for another csid.
  CHECK_FALSE(w.write_first_header(5, 9, 0, 1, chunk_body(p, 4, 128), header, header_len));
  // Built for another chunk size.
  CHECK_FALSE(w.write_first_header(4, 9, 0, 1, chunk_body(p, 4, 4096), header, header_len));
  // Multi-chunk message needing the extended timestamp on its continuations.
  CHECK_FALSE(w.write_first_header(4, 9, 0x01000000, 1, chunk_body(p, 4, 128), header, header_len));
  CHECK(header_len == 99);
  // Nothing was recorded: the next write on csid 4 is still a first use (fmt 0).
  Bytes out;
  w.write(4, 9, 10, 1, p, out);
  CHECK(fmt_of(out, 0) == 0);
  // A single-chunk message with an extended timestamp is fine: no continuation headers.
  const Bytes small = pattern(20, 2);
  CHECK(w.write_first_header(4, 9, 0x01000000, 2, chunk_body(small, 4, 128), header, header_len));
  CHECK(header_len == 16);
  CHECK(Bytes(header, header + header_len) ==
        Bytes{0x04, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x14, 0x09, 0x02, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00});
  // And then it compresses like write(): the same delta twice gives fmt 2, then fmt 3.
  CHECK(w.write_first_header(4, 9, 0x01000028, 2, chunk_body(small, 4, 128), header, header_len));
  CHECK(Bytes(header, header + header_len) == Bytes{0x84, 0x00, 0x00, 0x28});
  CHECK(w.write_first_header(4, 9, 0x01000050, 2, chunk_body(small, 4, 128), header, header_len));
  CHECK(Bytes(header, header + header_len) == Bytes{0xC4});
}
