// ChunkReader: the receive side of the chunk stream (docs/protocol.md, "Chunk headers" to
// "Control messages"), sans-I/O.
//
// Lifecycle rules:
//  1. Construct with limits, then call feed() with the bytes that follow the handshake, split
//     any way the socket delivers them. Every split gives the same messages.
//  2. feed() copies each message body once, into a buffer that grows with the bytes actually
//     received (never sized from the declared length), and hands it out as a Slice that owns
//     that buffer: no further copy.
//  3. Set Chunk Size (type 1) and Abort (type 2) are applied by the reader the moment they
//     complete, because they change how the very next bytes parse; they are also delivered so
//     the session can see them.
//  4. Lenient where real peers need it: fmt 1/2 on a fresh csid assume zero fields (librtmp
//     pings); a fmt 0/1/2 header on a csid with a partial message discards the partial message
//     and starts the new one (SRS rejects the stream); both extended-timestamp conventions on
//     type-3 continuation chunks are detected (docs/protocol.md, "Extended timestamp").
//  5. After feed() fails the reader is unusable: failed() is true and every later feed()
//     returns the same error. The session should close the connection.
//
// feed() errors:
//  - Errc::LimitExceeded: a message longer than max_message_size, more than max_chunk_streams
//    chunk streams, more than max_buffered_bytes of partial messages, or a Set Chunk Size above
//    max_chunk_size.
//  - Errc::BadChunkSize: Set Chunk Size of 0 or with bit 31 set.
//  - Errc::Malformed: fmt 3 on a chunk stream that never had a header, or a Set Chunk Size /
//    Abort message shorter than 4 bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "protocol/chunk_header.hpp"
#include "protocol/message.hpp"
#include "base/result.hpp"

namespace sluice::protocol {

// Whether type-3 chunks carry the extended timestamp after a header that had one (docs/protocol.md,
// "Extended timestamp"). Auto: present on fmt-3 new-message chunks; on continuations detected from
// the first one seen (SRS heuristic) and then locked for the connection. Always / Never: per-app
// overrides, like nginx-rtmp's publish_time_fix, applied to both kinds of type-3 chunk.
enum class ExtendedTimestampOnType3 : uint8_t { Auto, Always, Never };

struct ChunkReaderLimits {
  // Prevents one declared-huge message from pinning memory (the 24-bit length allows 16 MiB).
  // A larger declared length fails with Errc::LimitExceeded as soon as the header arrives.
  uint32_t max_message_size = 16u << 20;
  // Prevents a csid-spraying peer from making us keep state for all 65598 chunk streams.
  size_t max_chunk_streams = 256;
  // Prevents a peer from starting many large messages on different csids and never finishing
  // them: the sum of the bytes held in partial messages is capped.
  uint64_t max_buffered_bytes = 64u << 20;
  // A ceiling on the peer's Set Chunk Size. Chunk size does not cost memory here (bodies grow with
  // received bytes), so the default is the protocol maximum; a deployment may lower it.
  uint32_t max_chunk_size = kMaxChunkSizeValue;
  ExtendedTimestampOnType3 ext_ts = ExtendedTimestampOnType3::Auto;
};

class ChunkReader {
 public:
  explicit ChunkReader(ChunkReaderLimits limits = {});

  // Consumes all of `in` unless it fails (partial headers are kept internally), appending every
  // completed message to `out`.
  Result<void> feed(std::span<const uint8_t> in, std::vector<Message>& out);

  // The peer's current chunk size.
  uint32_t chunk_size() const { return chunk_size_; }
  // Total bytes fed (the session reports it modulo 2^32 in Acknowledgements).
  uint64_t bytes_received() const { return bytes_received_; }
  bool failed() const { return state_ == State::Failed; }
  const Error& error() const { return error_; }
  const ChunkReaderLimits& limits() const { return limits_; }
  // Replaces the limits, to raise them (a session lifts its pre-connect limits once the peer has
  // connected). Lowering them does not shrink what is held already.
  void set_limits(const ChunkReaderLimits& limits) { limits_ = limits; }

  // Bytes of partially reassembled messages held right now (what max_buffered_bytes caps).
  uint64_t buffered_bytes() const { return buffered_bytes_; }
  // Memory reserved for those partial messages (capacity, at most about twice buffered_bytes()).
  uint64_t reserved_bytes() const { return reserved_bytes_; }
  // Chunk streams with state (what max_chunk_streams caps).
  size_t chunk_stream_count() const { return streams_.size(); }

 private:
  enum class State : uint8_t {
    Header,        // collecting basic + message header (+ extended timestamp)
    PeekExtended,  // first continuation after an extended header, convention not yet known
    Payload,       // copying the bytes of the current chunk into its message
    Failed,
  };
  // What the peer does on type-3 continuation chunks, learnt once per connection (Auto mode).
  enum class ContinuationExtTs : uint8_t { Unknown, Present, Absent };
  // What a type-3 chunk on a given stream carries after its basic header.
  enum class Type3Ext : uint8_t { None, Read, Peek };

  struct Stream {
    uint32_t csid = 0;
    uint32_t timestamp = 0;  // absolute timestamp of the current (or last) message
    uint32_t delta = 0;      // last delta; after fmt 0 the timestamp itself (spec)
    uint32_t length = 0;
    uint32_t stream_id = 0;
    uint32_t ext_value = 0;  // value of the extended field of the governing 0/1/2 header
    uint8_t type = 0;
    bool extended = false;     // the governing 0/1/2 header had the 0xFFFFFF marker
    bool in_progress = false;  // a message is partially received
    std::vector<uint8_t> body;
  };

  Result<void> run(std::span<const uint8_t>& in, std::vector<Message>& out);
  Result<void> step_header(std::span<const uint8_t>& in, std::vector<Message>& out);
  Result<void> step_peek(std::span<const uint8_t>& in, std::vector<Message>& out);
  Result<void> step_payload(std::span<const uint8_t>& in, std::vector<Message>& out);

  size_t header_bytes_needed(const uint8_t* p, size_t n) const;
  Type3Ext type3_ext(const Stream& s) const;
  Result<void> on_header(const uint8_t* h, size_t len, std::vector<Message>& out);
  static void apply_message_header(Stream& s, const ChunkHeader& h);
  Result<uint32_t> stream_for(uint32_t csid);
  Result<void> start_message(Stream& s);
  Result<void> begin_chunk(std::vector<Message>& out);
  Result<void> append(Stream& s, std::span<const uint8_t> bytes);
  Result<void> complete(Stream& s, std::vector<Message>& out);
  Result<void> apply_control(const Message& m);
  void discard(Stream& s);

  ChunkReaderLimits limits_;
  State state_ = State::Header;
  ContinuationExtTs continuation_ext_ = ContinuationExtTs::Unknown;
  uint32_t chunk_size_ = kDefaultChunkSize;
  uint32_t cur_ = 0;         // index of the chunk stream of the chunk being read
  uint32_t chunk_left_ = 0;  // payload bytes of the current chunk still to come
  uint8_t hdr_len_ = 0;      // bytes in hdr_ when a header arrived split
  uint8_t peek_len_ = 0;     // bytes in peek_ when the peeked field arrived split
  uint8_t hdr_[kMaxChunkHeaderSize] = {};
  uint8_t peek_[4] = {};
  uint64_t bytes_received_ = 0;
  uint64_t buffered_bytes_ = 0;
  uint64_t reserved_bytes_ = 0;
  detail::CsidMap<Stream> streams_;
  Error error_;
};

}  // namespace sluice::protocol
