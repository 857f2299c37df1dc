// The built-in browser page: GET / (or /index.html) lists the live streams and plays one with
// mpegts.js, hls.js or WebRTC (WHEP), and plots the server's and the streams' last minutes with
// uPlot; GET /web/app.js, /web/plots.js, /web/mpegts.js, /web/hls.js, /web/uplot.js and
// /web/uplot.css are its scripts and stylesheet. GET /publish.html (script /web/publish.js)
// publishes the browser's camera over WHIP. The files are embedded in the binary at build time
// (web/CMakeLists.txt: the pages and their scripts from web/, mpegts.js, hls.js and uPlot from
// npm), so the pages are served from memory whatever the working directory. No I/O here: the
// caller sends the reply (http_handlers.cpp).
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "server/http/request.hpp"

namespace sluice::server {

// One embedded file. Defined by the generated web_assets.cpp (web/embed_assets.cmake).
struct EmbeddedWebFile {
  const char* name;           // "index.html", "app.js", "mpegts.js"
  const unsigned char* data;  // the file's bytes (followed by a NUL that `size` does not count)
  size_t size;
  const char* sha256;  // hex digest of the bytes, computed at build time
};
std::span<const EmbeddedWebFile> embedded_web_files();

// The embedded file behind a page path ("/", "/index.html", "/web/app.js", "/web/mpegts.js",
// "/publish.html", ...), or nullptr for any other path.
const EmbeddedWebFile* http_page_file(std::string_view path);

struct HttpPageReply {
  int status = 200;
  std::string content_type;  // empty for 304
  std::string_view body;     // points into the embedded file (or a static string): never freed
  std::string headers;       // extra "Name: value\r\n" lines: ETag, Cache-Control, ...
};

// The answer to a request for a page path; nullopt when `req.path` is not one (the caller routes it
// elsewhere). GET and HEAD get 200 with the file, or 304 when If-None-Match carries its ETag; other
// methods get 405 with Allow. The ETag is a hash of the content, so it changes with the binary's
// page and only then; Cache-Control: no-cache makes browsers revalidate (a cheap 304) on each load.
std::optional<HttpPageReply> http_page_reply(const HttpRequest& req);

}  // namespace sluice::server
