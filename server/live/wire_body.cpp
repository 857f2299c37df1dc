#include "server/live/wire_body.hpp"

#include "protocol/chunk_writer.hpp"
#include "protocol/session.hpp"

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

}  // namespace sluice::server
