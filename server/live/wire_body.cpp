#include "server/live/wire_body.hpp"

#include "protocol/chunk_writer.hpp"
#include "protocol/session.hpp"
#include "server/io/write_batch.hpp"

namespace sluice::server {

namespace {
// Pre-chunked bodies are cached per (chunk stream, chunk size).
uint32_t wire_key(uint32_t csid, uint32_t chunk_size) { return (csid << 17) | (chunk_size & 0x1FFFF); }
}  // namespace

void prepare_wire_body(const media::Frame& f, uint32_t chunk_size) {
  uint32_t csid = protocol::Session::media_csid(f.rtmp_type);
  uint32_t key = wire_key(csid, chunk_size);
  if (f.wire_cache_key == key && (!f.wire_cache.empty() || f.payload.empty())) return;
  // First player to send this frame chunks it, once, for everyone.
  protocol::ChunkedBody body = protocol::chunk_body(f.payload.span(), csid, chunk_size);
  f.wire_cache = std::move(body.bytes);
  f.wire_cache_key = key;
}

void append_frame_message(protocol::ChunkWriter& writer, const media::Frame& f, uint32_t ts, uint32_t stream_id,
                          WriteBatch& batch) {
  uint32_t csid = protocol::Session::media_csid(f.rtmp_type);
  uint32_t chunk_size = writer.chunk_size();
  prepare_wire_body(f, chunk_size);
  protocol::ChunkedBody body{f.wire_cache.share(), static_cast<uint32_t>(f.payload.size()), csid, chunk_size};
  uint8_t* header = batch.reserve_header(protocol::kMaxChunkHeaderSize);
  size_t header_len = 0;
  if (writer.write_first_header(csid, f.rtmp_type, ts, stream_id, body, header, header_len)) {
    batch.commit_header(header_len);
    batch.add_slice(std::move(body.bytes));
    return;
  }
  // Extended timestamps need per-connection continuation headers: encode this one in full.
  batch.commit_header(0);
  auto& arena = batch.arena();
  size_t old = arena.size();
  writer.write(csid, f.rtmp_type, ts, stream_id, f.payload.span(), arena);
  batch.after_arena_append(old);
}

void append_session_output(protocol::Session& session, WriteBatch& batch) {
  if (!session.has_output()) return;
  std::vector<uint8_t>& arena = batch.arena();
  size_t old = arena.size();
  session.drain_output(arena);
  batch.after_arena_append(old);
}

}  // namespace sluice::server
