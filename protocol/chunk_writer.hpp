// ChunkWriter: the send side of the chunk stream (docs/protocol.md, "Chunk headers" to
// "Extended timestamp"), sans-I/O.
//
// Lifecycle rules:
//  1. One ChunkWriter per connection direction; it keeps per-csid header state, so every byte it
//     produces must reach the peer, in order.
//  2. set_chunk_size() applies to the next message written. Sending the Set Chunk Size message
//     itself (at the old size, before the change) is the session's job.
//  3. write() appends the fully chunked message to the caller's vector (no other allocation).
//  4. The fan-out path chunks a message body once with chunk_body() and then, per subscriber,
//     asks write_first_header() for that subscriber's first header: the wire bytes are
//     header + body.bytes. When it returns false, use write() for that subscriber.
//
// Header selection per csid: fmt 0 on first use, when the message stream id changes, when time
// goes backwards (serial arithmetic) or when the delta would need an extended timestamp; else
// fmt 1 when length or type changed; fmt 3 when everything including the delta repeats; fmt 2
// otherwise. Two deliberate conservative choices, both valid per spec:
//  - fmt 3 never starts a message right after fmt 0: the spec says it then adds the fmt-0
//    timestamp again, librtmp (rtmpdump, GStreamer rtmpsrc) repeats it unchanged instead.
//  - the extended timestamp is only ever written after fmt 0 (value = absolute timestamp), and then
//    also on every type-3 continuation (docs/protocol.md, "Extended timestamp"). Readers disagree
//    about what a continuation repeats after fmt 1/2 (FFmpeg: the delta, SRS compares with the
//    absolute time); after fmt 0 both are the same number.
//
// Preconditions (not checked in release builds): kMinCsid <= csid <= kMaxCsid and
// payload size <= kMaxMessageLength.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "base/bytes.hpp"
#include "protocol/chunk_header.hpp"
#include "protocol/message.hpp"

namespace sluice::protocol {

// A message body chunked once, shared by every recipient that uses the same csid and chunk size.
struct ChunkedBody {
  Slice bytes;                // payload with a 1..3-byte fmt-3 basic header before every chunk after the first
  uint32_t payload_size = 0;  // original message length
  uint32_t csid = 0;
  uint32_t chunk_size = 0;
};

// One copy of the payload per message, shared by all recipients. chunk_size is clamped to
// 1..kMaxChunkSizeValue like ChunkWriter::set_chunk_size().
ChunkedBody chunk_body(std::span<const uint8_t> payload, uint32_t csid, uint32_t chunk_size);

class ChunkWriter {
 public:
  ChunkWriter() = default;
  explicit ChunkWriter(uint32_t chunk_size) { set_chunk_size(chunk_size); }

  // Our outgoing chunk size, for the next message written. Clamped to 1..kMaxChunkSizeValue.
  void set_chunk_size(uint32_t size);
  uint32_t chunk_size() const { return chunk_size_; }

  void write(uint32_t csid, uint8_t type, uint32_t timestamp, uint32_t stream_id, std::span<const uint8_t> payload,
             std::vector<uint8_t>& out);
  // The same message with its payload given in two parts, head then body (a tag prefix and the
  // file bytes it describes), without joining them first.
  void write(uint32_t csid, uint8_t type, uint32_t timestamp, uint32_t stream_id, std::span<const uint8_t> head,
             std::span<const uint8_t> body, std::vector<uint8_t>& out);
  void write(const Message& m, std::vector<uint8_t>& out) {
    write(m.csid, m.type, m.timestamp, m.stream_id, m.payload.span(), out);
  }

  // Returns false (writes nothing, state unchanged) when `body` cannot serve this recipient: it
  // was built for another csid or chunk size, or a multi-chunk message needs an extended
  // timestamp (then every continuation header differs per recipient). Otherwise writes the first
  // chunk header (<= kMaxChunkHeaderSize bytes) into `header`, sets header_len, and updates the
  // csid state exactly as write() would have.
  bool write_first_header(uint32_t csid, uint8_t type, uint32_t timestamp, uint32_t stream_id, const ChunkedBody& body,
                          uint8_t* header, size_t& header_len);

 private:
  struct Stream {
    uint32_t timestamp = 0;
    uint32_t delta = 0;
    uint32_t length = 0;
    uint32_t stream_id = 0;
    uint8_t type = 0;
    bool delta_valid = false;  // false after fmt 0: a fmt-3 start may not rely on the delta
  };
  struct Plan {
    uint32_t index = 0;  // CsidMap index, or kNone for a csid never written
    ChunkHeader header;
  };

  Plan plan(uint32_t csid, uint8_t type, uint32_t timestamp, uint32_t stream_id, uint32_t length) const;
  void commit(const Plan& p, uint8_t type, uint32_t timestamp, uint32_t stream_id, uint32_t length);

  uint32_t chunk_size_ = kDefaultChunkSize;
  detail::CsidMap<Stream> streams_;
};

}  // namespace sluice::protocol
