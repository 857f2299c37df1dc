#include "protocol/chunk_writer.hpp"

#include <algorithm>
#include <cassert>

#include "base/byte_io.hpp"

namespace sluice::protocol {

namespace {

uint32_t clamp_chunk_size(uint32_t size) { return std::clamp<uint32_t>(size, 1, kMaxChunkSizeValue); }

// Number of chunks a message of `length` bytes takes (a zero-length message is one bare header).
uint64_t chunk_count(uint32_t length, uint32_t chunk_size) {
  return length == 0 ? 1 : (uint64_t{length} + chunk_size - 1) / chunk_size;
}

// Grows `out` geometrically so many small writes into one vector stay amortised O(1); a plain
// reserve(size + n) would reallocate on every call.
void ensure_room(std::vector<uint8_t>& out, size_t extra) {
  const size_t need = out.size() + extra;
  if (need > out.capacity()) out.reserve(std::max(need, 2 * out.capacity()));
}

}  // namespace

void ChunkWriter::set_chunk_size(uint32_t size) { chunk_size_ = clamp_chunk_size(size); }

ChunkWriter::Plan ChunkWriter::plan(uint32_t csid, uint8_t type, uint32_t timestamp, uint32_t stream_id,
                                    uint32_t length) const {
  Plan p;
  p.index = streams_.find(csid);
  ChunkHeader& h = p.header;
  h.csid = csid;
  h.length = length;
  h.type = type;
  h.stream_id = stream_id;
  h.fmt = chunk_fmt::kFull;
  h.timestamp = timestamp;
  h.extended = needs_extended_timestamp(timestamp);
  if (p.index == detail::CsidMap<Stream>::kNone) return p;
  const Stream& s = streams_[p.index];
  const uint32_t delta = timestamp - s.timestamp;  // modular
  const bool backwards = static_cast<int32_t>(delta) < 0;
  if (stream_id != s.stream_id || backwards || needs_extended_timestamp(delta)) return p;
  h.timestamp = delta;
  h.extended = false;
  if (length != s.length || type != s.type) {
    h.fmt = chunk_fmt::kSameStream;
  } else if (s.delta_valid && delta == s.delta) {
    h.fmt = chunk_fmt::kNone;
  } else {
    h.fmt = chunk_fmt::kDeltaOnly;
  }
  return p;
}

void ChunkWriter::commit(const Plan& p, uint8_t type, uint32_t timestamp, uint32_t stream_id, uint32_t length) {
  const uint32_t index = p.index != detail::CsidMap<Stream>::kNone ? p.index : streams_.insert(p.header.csid);
  Stream& s = streams_[index];
  s.timestamp = timestamp;
  s.stream_id = stream_id;
  s.length = length;
  s.type = type;
  if (p.header.fmt == chunk_fmt::kFull) {
    s.delta_valid = false;
  } else if (p.header.fmt != chunk_fmt::kNone) {
    s.delta = p.header.timestamp;
    s.delta_valid = true;
  }
}

namespace {

// Appends bytes [pos, pos + n) of the concatenation head + body.
void append_joined(std::vector<uint8_t>& out, std::span<const uint8_t> head, std::span<const uint8_t> body, size_t pos,
                   size_t n) {
  if (pos < head.size()) {
    const size_t from_head = std::min(n, head.size() - pos);
    out.insert(out.end(), head.begin() + static_cast<std::ptrdiff_t>(pos),
               head.begin() + static_cast<std::ptrdiff_t>(pos + from_head));
    n -= from_head;
    pos = head.size();
  }
  if (n == 0) return;
  const auto begin = body.begin() + static_cast<std::ptrdiff_t>(pos - head.size());
  out.insert(out.end(), begin, begin + static_cast<std::ptrdiff_t>(n));
}

}  // namespace

void ChunkWriter::write(uint32_t csid, uint8_t type, uint32_t timestamp, uint32_t stream_id,
                        std::span<const uint8_t> payload, std::vector<uint8_t>& out) {
  write(csid, type, timestamp, stream_id, {}, payload, out);
}

void ChunkWriter::write(uint32_t csid, uint8_t type, uint32_t timestamp, uint32_t stream_id,
                        std::span<const uint8_t> head, std::span<const uint8_t> body, std::vector<uint8_t>& out) {
  assert(csid >= kMinCsid && csid <= kMaxCsid);
  assert(head.size() + body.size() <= kMaxMessageLength);
  const auto length = static_cast<uint32_t>(head.size() + body.size());
  const Plan p = plan(csid, type, timestamp, stream_id, length);

  uint8_t first[kMaxChunkHeaderSize];
  const size_t first_len = encode_chunk_header(p.header, first);
  // Continuation header: fmt 3, plus the extended timestamp when the first header had one.
  uint8_t cont[3 + 4];
  size_t cont_len = encode_basic_header(chunk_fmt::kNone, csid, cont);
  if (p.header.extended) {
    store_u32be(cont + cont_len, timestamp);
    cont_len += 4;
  }
  const uint64_t chunks = chunk_count(length, chunk_size_);
  ensure_room(out, first_len + length + (chunks - 1) * cont_len);

  out.insert(out.end(), first, first + first_len);
  size_t pos = std::min<size_t>(chunk_size_, length);
  append_joined(out, head, body, 0, pos);
  while (pos < length) {
    const size_t n = std::min<size_t>(chunk_size_, length - pos);
    out.insert(out.end(), cont, cont + cont_len);
    append_joined(out, head, body, pos, n);
    pos += n;
  }
  commit(p, type, timestamp, stream_id, length);
}

bool ChunkWriter::write_first_header(uint32_t csid, uint8_t type, uint32_t timestamp, uint32_t stream_id,
                                     const ChunkedBody& body, uint8_t* header, size_t& header_len) {
  if (body.csid != csid || body.chunk_size != chunk_size_) return false;
  const Plan p = plan(csid, type, timestamp, stream_id, body.payload_size);
  // A single-chunk message has no continuation headers, so its extended field lives only in the
  // per-recipient header and the shared body still fits.
  if (p.header.extended && body.payload_size > chunk_size_) return false;
  header_len = encode_chunk_header(p.header, header);
  commit(p, type, timestamp, stream_id, body.payload_size);
  return true;
}

ChunkedBody chunk_body(std::span<const uint8_t> payload, uint32_t csid, uint32_t chunk_size) {
  assert(csid >= kMinCsid && csid <= kMaxCsid);
  assert(payload.size() <= kMaxMessageLength);
  ChunkedBody body;
  body.payload_size = static_cast<uint32_t>(payload.size());
  body.csid = csid;
  body.chunk_size = clamp_chunk_size(chunk_size);
  uint8_t cont[3];
  const size_t cont_len = encode_basic_header(chunk_fmt::kNone, csid, cont);
  const uint64_t chunks = chunk_count(body.payload_size, body.chunk_size);
  std::vector<uint8_t> bytes;
  bytes.reserve(payload.size() + (chunks - 1) * cont_len);
  size_t pos = 0;
  while (pos < payload.size()) {
    if (pos != 0) bytes.insert(bytes.end(), cont, cont + cont_len);
    const size_t n = std::min<size_t>(body.chunk_size, payload.size() - pos);
    const auto begin = payload.begin() + static_cast<std::ptrdiff_t>(pos);
    bytes.insert(bytes.end(), begin, begin + static_cast<std::ptrdiff_t>(n));
    pos += n;
  }
  if (!bytes.empty()) body.bytes = Slice::adopt(std::move(bytes));
  return body;
}

}  // namespace sluice::protocol
