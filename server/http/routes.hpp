// What the server answers to each request: picks the responder of a dispatched request and starts
// it (server/http/responder.hpp lists the kinds). Routes:
//   GET/HEAD /{live-app}/{stream}.flv   HTTP-FLV of a live stream (flv_responder.hpp)
//   GET/HEAD /{live-app}/{stream}/snapshot.jpg   its latest keyframe as a JPEG (snapshot_responder.hpp),
//                                                snapshot.webp as a WebP
//   GET/HEAD /{vod-app}/{path}          the file (Range, conditional requests), sent with sendfile
//                                       (file_responder.hpp)
//   PUT      /{vod-app}/{path}          upload (upload_responder.hpp), when http.upload.token is set
//   OPTIONS  on the above, and *        CORS preflight (simple_responder.hpp)
//   /api/v1/..., /metrics               the stats API (api_responder.hpp), for http.api.allow addresses
//   GET/HEAD /, /index.html, /web/*.js  the built-in browser page, from memory (page.hpp)
#pragma once

namespace sluice::server {

class HttpConnection;

// The connection's request is ready (HttpConnection::request()): answer it.
void http_route(HttpConnection& conn);

}  // namespace sluice::server
