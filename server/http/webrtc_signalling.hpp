// WHIP and WHEP over HTTP (docs/webrtc.md, "Signalling"): the paths of a live app that WebRTC
// clients use, answered here and handed to the loop's WebrtcService (server/webrtc/).
//   POST /APP/STREAM/whip  (application/sdp)  publish: 201 Created, Location, the SDP answer
//   POST /APP/STREAM/whep  (application/sdp)  play: the same
//   DELETE /APP/STREAM/whip/ID, .../whep/ID   the session ends: 200
//   OPTIONS on them                           CORS preflight for browsers (Authorization allowed)
// The offer is admitted like an RTMP publish or play (rules, keys, signed URLs, hooks with
// "protocol": "webrtc"); WHIP's key comes as `Authorization: Bearer KEY` (or ?key= as elsewhere).
#pragma once

#include <string_view>

#include "config/config.hpp"

namespace sluice::server {

class HttpConnection;

// `rest`: the path after "/APP/", percent-decoded. False when it is no WHIP/WHEP path (the
// caller goes on routing); true when the request was answered or is being answered.
bool http_route_webrtc(HttpConnection& c, const config::AppConfig& app, std::string_view rest);

}  // namespace sluice::server
