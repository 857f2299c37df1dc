// The RTMP wire form of a live frame, made once: the frame's payload chunked for the server's media
// chunk stream and a chunk size, shared by every RTMP player of every worker (only each player's
// first chunk header differs). docs/architecture.md, "Data path".
#pragma once

#include <cstdint>

#include "media/frame.hpp"

namespace sluice::server {

// Builds f.wire_cache for chunk_size unless it is there already.
void prepare_wire_body(const media::Frame& f, uint32_t chunk_size);

}  // namespace sluice::server
