// The RTMP wire form of a live frame, made once: the frame's payload chunked for the server's media
// chunk stream and a chunk size, shared by every RTMP player of every worker (only each player's
// first chunk header differs). docs/architecture.md, "Data path".
#pragma once

#include <cstdint>

#include "media/frame.hpp"

namespace sluice::protocol {
class ChunkWriter;
class Session;
}  // namespace sluice::protocol

namespace sluice::server {

class WriteBatch;

// Builds f.wire_cache for chunk_size unless it is there already.
void prepare_wire_body(const media::Frame& f, uint32_t chunk_size);

// Appends f as one RTMP message at timestamp ts on stream_id to the batch: this connection's first
// chunk header and the shared body, or (extended timestamps) the message chunked in full.
void append_frame_message(protocol::ChunkWriter& writer, const media::Frame& f, uint32_t ts, uint32_t stream_id,
                          WriteBatch& batch);

// Moves the session's queued output (replies, control messages) into the batch, behind what the
// batch holds: before any media chunked after it, as the chunk writer's state requires.
void append_session_output(protocol::Session& session, WriteBatch& batch);

}  // namespace sluice::server
