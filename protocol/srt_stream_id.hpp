// The stream id an SRT caller sends in its handshake (SRTO_STREAMID, at most 512 bytes), read as
// docs/srt.md ("Stream ids") says: which stream, publish or read, and the credentials.
//
// Forms:
//  1. The SRT Access Control syntax: "#!::" and comma-separated key=value pairs. r the resource
//     (APP/NAME, with an optional "?query"), m the mode (request, the default; publish;
//     bidirectional is refused), u the user, s the session id, t the type (stream only), h the
//     host (ignored). Other keys become query parameters of the resource, so that
//     "#!::r=live/cam,m=publish,key=k1" carries the key as "key=k1" does in an RTMP name.
//  2. The short forms other servers document: "publish:APP/NAME" and "read:APP/NAME" (MediaMTX),
//     each with an optional "?query".
//  3. A bare "APP/NAME[?query]": a reader.
// The resource's first segment is the app, the rest the stream name (checked by the server as an
// RTMP name is). Nothing is percent-decoded here: the query goes to the same parser as RTMP's.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/result.hpp"

namespace sluice::protocol {

inline constexpr size_t kMaxSrtStreamId = 512;

struct SrtStreamId {
  enum class Mode : uint8_t { Request, Publish };
  Mode mode = Mode::Request;
  std::string app;
  std::string name;
  std::string query;  // without the '?'
  std::string user;
  std::string session;
};

Result<SrtStreamId> parse_srt_stream_id(std::string_view id);

}  // namespace sluice::protocol
