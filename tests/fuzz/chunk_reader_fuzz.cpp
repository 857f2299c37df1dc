// Fuzz target for the chunk stream decoder.
//
// Input: byte 0 seeds the split sizes and picks the ext-ts mode, the rest is the chunk stream.
// Properties checked:
//  - no crash, no sanitizer report;
//  - limits respected: no message above max_message_size, no more than max_chunk_streams chunk
//    streams, never more than max_buffered_bytes held in partial messages;
//  - decode -> encode (ChunkWriter) -> decode gives the same messages.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <vector>

#include "base/byte_io.hpp"
#include "protocol/chunk_reader.hpp"
#include "protocol/chunk_writer.hpp"

using namespace sluice;
using namespace sluice::protocol;

namespace {

// Small limits so the fuzzer reaches them quickly.
ChunkReaderLimits fuzz_limits(uint8_t selector) {
  ChunkReaderLimits limits;
  limits.max_message_size = 64 * 1024;
  limits.max_chunk_streams = 16;
  limits.max_buffered_bytes = 128 * 1024;
  limits.max_chunk_size = 1 << 20;
  constexpr ExtendedTimestampOnType3 kModes[] = {ExtendedTimestampOnType3::Auto, ExtendedTimestampOnType3::Always,
                                                 ExtendedTimestampOnType3::Never, ExtendedTimestampOnType3::Auto};
  limits.ext_ts = kModes[(selector >> 6) & 3];
  return limits;
}

void check(bool ok) {
  if (!ok) std::abort();
}

void check_limits(const ChunkReader& reader, const std::vector<Message>& out) {
  const ChunkReaderLimits& limits = reader.limits();
  check(reader.chunk_stream_count() <= limits.max_chunk_streams);
  check(reader.buffered_bytes() <= limits.max_buffered_bytes);
  // Bodies grow with received bytes, never from the declared length.
  check(reader.reserved_bytes() <= 2 * reader.buffered_bytes());
  check(reader.chunk_size() <= limits.max_chunk_size);
  for (const Message& m : out) check(m.payload.size() <= limits.max_message_size);
}

// Feeds `data` in pieces whose sizes come from a tiny LCG seeded by `seed`; seed 0 feeds it whole.
std::vector<Message> decode(const ChunkReaderLimits& limits, std::span<const uint8_t> data, uint32_t seed) {
  ChunkReader reader(limits);
  std::vector<Message> out;
  uint32_t state = seed * 2654435761u + 1;
  size_t pos = 0;
  while (pos < data.size()) {
    state = state * 1103515245u + 12345u;
    const size_t piece = seed == 0 ? data.size() : (state >> 16) % 64;  // zero-length feeds included
    const size_t n = piece < data.size() - pos ? piece : data.size() - pos;
    auto result = reader.feed(data.subspan(pos, n), out);
    check_limits(reader, out);
    if (!result) {
      check(reader.failed());
      break;
    }
    pos += n;
  }
  return out;
}

// Re-encodes messages as a peer session would: a Set Chunk Size takes effect for what follows.
std::vector<uint8_t> encode(const std::vector<Message>& messages) {
  ChunkWriter writer;
  std::vector<uint8_t> wire;
  for (const Message& m : messages) {
    writer.write(m, wire);
    if (m.type == msg_type::kSetChunkSize && m.payload.size() >= 4) writer.set_chunk_size(load_u32be(m.payload.data()));
  }
  return wire;
}

bool same(const Message& a, const Message& b) {
  if (a.csid != b.csid || a.type != b.type || a.timestamp != b.timestamp || a.stream_id != b.stream_id) return false;
  if (a.payload.size() != b.payload.size()) return false;
  return a.payload.empty() || std::memcmp(a.payload.data(), b.payload.data(), a.payload.size()) == 0;
}

void check_equal(const std::vector<Message>& a, const std::vector<Message>& b) {
  check(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) check(same(a[i], b[i]));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const uint8_t selector = data[0];
  const ChunkReaderLimits limits = fuzz_limits(selector);
  const std::span<const uint8_t> stream(data + 1, size - 1);

  const std::vector<Message> first = decode(limits, stream, selector + 1u);
  // Any split gives the same messages, also up to a failure: bytes before it parse identically.
  check_equal(first, decode(limits, stream, 0));

  // Our writer always repeats the extended timestamp on type-3 chunks, which Never would not read.
  ChunkReaderLimits relaxed = limits;
  relaxed.ext_ts = ExtendedTimestampOnType3::Auto;
  check_equal(first, decode(relaxed, encode(first), selector + 2u));
  return 0;
}
