#include "server/http/page.hpp"

#include "server/http/util.hpp"

namespace sluice::server {

namespace {

struct PageRoute {
  std::string_view path;
  std::string_view file;
  std::string_view content_type;
};

constexpr PageRoute kRoutes[] = {
    {"/", "index.html", "text/html; charset=utf-8"},
    {"/index.html", "index.html", "text/html; charset=utf-8"},
    {"/web/app.js", "app.js", "text/javascript; charset=utf-8"},
    {"/publish.html", "publish.html", "text/html; charset=utf-8"},
    {"/web/publish.js", "publish.js", "text/javascript; charset=utf-8"},
    {"/web/mpegts.js", "mpegts.js", "text/javascript; charset=utf-8"},
    {"/web/hls.js", "hls.js", "text/javascript; charset=utf-8"},
    {"/web/plots.js", "plots.js", "text/javascript; charset=utf-8"},
    {"/web/uplot.js", "uplot.js", "text/javascript; charset=utf-8"},
    {"/web/uplot.css", "uplot.css", "text/css; charset=utf-8"},
};

// The pages load only their own scripts, play only this server's streams (mpegts.js and hls.js feed
// the <video> through a blob: MediaSource URL, hls.js's worker is a blob: too; WebRTC's MediaStream
// is a srcObject, which media-src does not govern; WHIP and WHEP offers go to 'self') and may not be
// framed by another site.
constexpr std::string_view kPageHeaders =
    "Content-Security-Policy: default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; media-src 'self' blob:; worker-src 'self' blob:; connect-src 'self'; "
    "object-src 'none'; base-uri 'none'; frame-ancestors 'none'\r\n"
    "Referrer-Policy: no-referrer\r\n";

const PageRoute* find_route(std::string_view path) {
  for (const PageRoute& r : kRoutes)
    if (r.path == path) return &r;
  return nullptr;
}

const EmbeddedWebFile* find_file(std::string_view name) {
  for (const EmbeddedWebFile& f : embedded_web_files())
    if (name == f.name) return &f;
  return nullptr;
}

}  // namespace

const EmbeddedWebFile* http_page_file(std::string_view path) {
  const PageRoute* r = find_route(path);
  return r ? find_file(r->file) : nullptr;
}

std::optional<HttpPageReply> http_page_reply(const HttpRequest& req) {
  const PageRoute* route = find_route(req.path);
  if (!route) return std::nullopt;
  HttpPageReply reply;
  const EmbeddedWebFile* file = find_file(route->file);
  if (!file) {  // cannot happen with the generated table; a 404 rather than a crash if it does
    reply.status = 404;
    reply.content_type = "text/plain; charset=utf-8";
    reply.body = "404 Not Found: this build has no embedded page\n";
    return reply;
  }
  if (req.method != "GET" && req.method != "HEAD") {
    reply.status = 405;
    reply.content_type = "text/plain; charset=utf-8";
    reply.body = "405 Method Not Allowed: use GET or HEAD\n";
    reply.headers = "Allow: GET, HEAD\r\n";
    return reply;
  }
  // A strong validator from the content: 64 bits of its SHA-256 are plenty to tell builds apart.
  std::string etag = "\"" + std::string(std::string_view(file->sha256).substr(0, 16)) + "\"";
  reply.headers = "ETag: " + etag + "\r\nCache-Control: no-cache\r\nX-Content-Type-Options: nosniff\r\n";
  if (route->content_type.starts_with("text/html")) reply.headers += kPageHeaders;
  const std::string* inm = req.header("if-none-match");
  if (inm && http_etag_list_matches(*inm, etag, true)) {
    reply.status = 304;
    return reply;
  }
  reply.content_type = std::string(route->content_type);
  reply.body = std::string_view(reinterpret_cast<const char*>(file->data), file->size);
  return reply;
}

}  // namespace sluice::server
