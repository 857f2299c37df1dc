// HttpConnection: what the server answers to each request. Routes:
//   GET/HEAD /{live-app}/{stream}.flv   HTTP-FLV of a live stream
//   GET/HEAD /{vod-app}/{path}          the file (Range, conditional requests), sent with sendfile
//   PUT      /{vod-app}/{path}          upload (http_upload.cpp), when http.upload.token is set
//   OPTIONS  on the above               CORS preflight
//   /api/v1/..., /metrics               the stats API (http_api.hpp), for http.api.allow addresses
//   GET/HEAD /, /index.html, /web/*.js  the built-in browser page, from memory (http_page.hpp)
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>

#include "server/http/api.hpp"
#include "server/http/connection.hpp"
#include "server/http/flv_player.hpp"
#include "server/http/page.hpp"
#include "server/http/service.hpp"
#include "server/http/util.hpp"
#include "server/io/logging.hpp"
#include "server/io/uv_handle.hpp"
#include "server/live/stream_registry.hpp"
#include "server/vod/files.hpp"

namespace sluice::server {

namespace {

constexpr std::string_view kCors = "Access-Control-Allow-Origin: *\r\n";

}  // namespace

// A file lookup on libuv's threadpool: realpath of the root, open, fstat and a check of where the
// opened descriptor really points, all off the loop (a slow disk or NFS never stalls it). Opening
// first and checking the descriptor's own path (/proc/self/fd) afterwards leaves no window for a
// symlink swapped in between a check and the open.
struct HttpFileJob {
  uv_work_t req{};
  HttpConnection* conn = nullptr;
  std::string root;
  std::string rel;
  int status = 0;  // 0, or the HTTP status of the failure
  std::string error;
  uv_file fd = -1;
  uint64_t size = 0;
  int64_t mtime_ns = 0;

  static void work(uv_work_t* req);
  static void after(uv_work_t* req, int status);
};

void HttpFileJob::work(uv_work_t* req) {
  auto* job = static_cast<HttpFileJob*>(req->data);
  char root_real[PATH_MAX];
  if (!::realpath(job->root.c_str(), root_real)) {
    job->status = 404;
    job->error = "media root does not exist";
    return;
  }
  std::string prefix(root_real);
  if (prefix.back() != '/') prefix += '/';
  std::string candidate = prefix + job->rel;
  // O_NONBLOCK: a FIFO named like a media file must not hang the pool thread in open().
  int fd = ::open(candidate.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    job->status = (errno == EACCES || errno == EPERM) ? 403 : 404;
    job->error = std::string("cannot open: ") + std::strerror(errno);
    return;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    job->status = 404;
    job->error = "not a regular file";
    return;
  }
  char link[64];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  char real[PATH_MAX];
  ssize_t n = ::readlink(link, real, sizeof real - 1);
  if (n <= 0 || std::string_view(real, static_cast<size_t>(n)).substr(0, prefix.size()) != prefix) {
    // Symlinks are followed, but the file must still be inside the root.
    ::close(fd);
    job->status = 404;
    job->error = "path leaves the media root";
    return;
  }
  job->fd = fd;
  job->size = static_cast<uint64_t>(st.st_size);
  job->mtime_ns = file_mtime_ns(st);
}

void HttpFileJob::after(uv_work_t* req, int) {
  auto* job = static_cast<HttpFileJob*>(req->data);
  HttpConnection* c = job->conn;
  auto done = c->take_retained();
  if (c->closing()) {
    if (job->fd >= 0) {
      c->file_fd_ = job->fd;
      c->close_file();
    }
    delete job;
    return;
  }
  c->on_file_opened(*job);
  delete job;
}

void HttpConnection::dispatch() {
  responding_ = true;
  response_started_ms_ = loop_.now_ms();
  response_body_bytes_ = 0;
  status_ = 0;
  head_only_ = req_.method == "HEAD";
  activity_ = Activity::Simple;
  resource_ = req_.path;
  ++service_.requests;
  const std::string& path = req_.path;
  if (path.empty() || path.front() != '/') {
    if (path == "*" && req_.method == "OPTIONS") {
      return send_simple(204, {}, {}, "Allow: GET, HEAD, OPTIONS\r\n");
    }
    return send_error(400, "bad request target");
  }
  if (path == "/metrics" || path == "/api" || path.starts_with("/api/")) return handle_api();
  if (auto r = http_page_reply(req_)) return send_simple(r->status, r->content_type, r->body, r->headers);
  // "/{app}/{rest}": the app is the first segment, as in rtmp://host/{app}/{stream}.
  size_t slash = path.find('/', 1);
  std::string app_name;
  if (slash == std::string::npos || !http_percent_decode(std::string_view(path).substr(1, slash - 1), app_name)) {
    return send_error(404, "no such resource");
  }
  const config::AppConfig* app = loop_.config().find_app(app_name);
  if (!app) return send_error(404, "no such app", false, kCors);
  std::string_view rest = std::string_view(path).substr(slash + 1);
  // PUT uploads into VOD apps, when a token is configured.
  bool put = app->type == config::AppType::Vod && !loop_.config().http.upload_token.empty();
  std::string methods = put ? "GET, HEAD, PUT, OPTIONS" : "GET, HEAD, OPTIONS";
  if (req_.method == "OPTIONS") {
    // CORS preflight: players on another origin may ask before a GET with a Range header.
    return send_simple(204, {}, {},
                       "Allow: " + methods +
                           "\r\nAccess-Control-Allow-Origin: *\r\nAccess-Control-Allow-Methods: " + methods +
                           "\r\nAccess-Control-Allow-Headers: Range, If-None-Match, If-Modified-Since, If-Range" +
                           (put ? ", Authorization, Content-Type" : "") + "\r\nAccess-Control-Max-Age: 86400\r\n");
  }
  if (req_.method == "PUT" && put) return handle_upload(*app, rest);
  if (req_.method != "GET" && req_.method != "HEAD") {
    return send_error(405, put ? "use GET, HEAD or PUT" : "use GET or HEAD", false,
                      "Allow: " + methods + "\r\n" + std::string(kCors));
  }
  if (app->type == config::AppType::Live) return handle_flv(*app, rest);
  return handle_file(*app, rest);
}

void HttpConnection::handle_api() {
  if (!config::cidr_list_allows(loop_.config().http.api_allow, peer_address())) {
    SLUICE_LOG_INFO("conn={} proto=http peer={} event=api_refused path=\"{}\"", id(), peer(), req_.path);
    return send_error(403, "the API is not open to this address (http.api.allow)");
  }
  HttpApiReply r = service_.api().reply(req_, id());
  // Not cacheable, and no CORS header: a web page on another origin must not read the server's state.
  send_simple(r.status, r.status == 204 ? std::string() : r.content_type, r.body,
              r.headers + "Cache-Control: no-store\r\n");
}

void HttpConnection::handle_flv(const config::AppConfig& app, std::string_view rest) {
  std::string decoded;
  if (!http_percent_decode(rest, decoded)) return send_error(400, "bad percent-encoding", false, kCors);
  if (!decoded.ends_with(".flv"))
    return send_error(404, "live streams are served as /{app}/{stream}.flv", false, kCors);
  std::string name = decoded.substr(0, decoded.size() - 4);
  if (!valid_stream_name(name)) return send_error(404, "invalid stream name", false, kCors);
  std::string key = app.name + "/" + name;
  bool live = service_.registry().is_live(key);
  if (!live && !app.wait_for_publisher) return send_error(404, "stream is not live", false, kCors);
  // Chunked keeps the connection usable after the stream ends; HTTP/1.0 has no chunks, so its
  // response ends when the connection closes.
  flv_chunked_ = req_.is_http11();
  std::string headers = "Content-Type: video/x-flv\r\nCache-Control: no-cache, no-store\r\n";
  headers += kCors;
  write_head(200, headers, flv_chunked_ ? Body::Chunked : Body::UntilClose);
  if (head_only_) return complete_response();
  activity_ = Activity::Flv;
  media::StreamHub& h = service_.registry().get_or_create(key, hub_options(app));
  SLUICE_LOG_INFO("conn={} proto=http peer={} event=play app={} stream={} live={} transfer={}", id(), peer(), app.name,
                  name, live ? "yes" : "waiting", flv_chunked_ ? "chunked" : "close");
  flv_ = std::make_unique<HttpFlvPlayer>(*this, service_.registry(), key, h, flv_chunked_, loop_.config().rtmp.player_queue);
}

void HttpConnection::handle_file(const config::AppConfig& app, std::string_view rest) {
  std::string decoded;
  if (!http_percent_decode(rest, decoded)) return send_error(400, "bad percent-encoding", false, kCors);
  auto rel = http_file_relative_path(decoded);
  if (!rel) {
    SLUICE_LOG_INFO("conn={} proto=http peer={} event=file_refused app={} path=\"{}\" reason=\"{}\"", id(), peer(),
                    app.name, req_.path, rel.error().context);
    return send_error(404, "no such file", false, kCors);
  }
  auto* job = new HttpFileJob;
  job->req.data = job;
  job->conn = this;
  job->root = app.root;
  job->rel = std::move(*rel);
  activity_ = Activity::File;
  retain();
  int rc = uv_queue_work(loop_.loop(), &job->req, &HttpFileJob::work, &HttpFileJob::after);
  if (rc != 0) {
    release();
    delete job;
    send_error(500, "cannot queue the file lookup", false, kCors);
  }
}

void HttpConnection::on_file_opened(HttpFileJob& job) {
  if (job.status != 0) {
    SLUICE_LOG_INFO("conn={} proto=http peer={} event=file_refused path=\"{}\" reason=\"{}\"", id(), peer(), req_.path,
                    job.error);
    return send_error(job.status, job.status == 403 ? "forbidden" : "no such file", false, kCors);
  }
  file_fd_ = job.fd;
  HttpValidators v{http_make_etag(job.size, job.mtime_ns), job.mtime_ns / 1'000'000'000};
  std::string validators = "ETag: " + v.etag + "\r\nLast-Modified: " + http_format_date(v.mtime_s) + "\r\n";
  switch (http_evaluate_preconditions(req_, v)) {
    case HttpPrecondition::NotModified:
      close_file();
      return send_simple(304, {}, {}, validators + std::string(kCors));
    case HttpPrecondition::Failed:
      close_file();
      return send_error(412, "precondition failed", false, validators + std::string(kCors));
    case HttpPrecondition::Proceed:
      break;
  }
  std::string headers = "Content-Type: " + std::string(http_content_type_for(job.rel)) + "\r\nAccept-Ranges: bytes\r\n";
  headers += validators;
  headers += kCors;
  int status = 200;
  uint64_t first = 0, length = job.size;
  const std::string* range = req_.method == "GET" ? req_.header("range") : nullptr;
  if (range && req_.header_count("range") == 1 && http_if_range_allows(req_, v)) {
    HttpByteRange r;
    switch (http_parse_range(*range, job.size, r)) {
      case HttpRangeResult::Partial:
        status = 206;
        first = r.first;
        length = r.length();
        headers += "Content-Range: bytes " + std::to_string(r.first) + "-" + std::to_string(r.last) + "/" +
                   std::to_string(job.size) + "\r\n";
        break;
      case HttpRangeResult::Unsatisfiable:
        close_file();
        return send_error(416, "range not satisfiable", false,
                          "Content-Range: bytes */" + std::to_string(job.size) + "\r\n" + headers);
      case HttpRangeResult::Whole:
        break;
    }
  }
  write_head(status, headers, Body::Length, length);
  if (head_only_ || length == 0) {
    close_file();
    return complete_response();
  }
  file_offset_ = first;
  file_length_ = length;
  file_body_pending_ = true;  // flush() starts it once the head is written
  request_flush();
}

void HttpConnection::start_file_body() {
  file_body_pending_ = false;
  uv_os_fd_t fd = -1;
  int rc = uv_fileno(as_handle(tcp()), &fd);
  if (rc == 0) {
    note_write_progress();
    rc = sendfile_.start(
        fd, file_fd_, file_offset_, file_length_,
        [this](uint64_t n) {
          add_bytes_out(n);
          response_body_bytes_ += n;
          note_write_progress();
        },
        [this](int status) { end_file_body(status); });
  }
  if (rc != 0) close(std::string("cannot send the file: ") + uv_strerror(rc));
}

void HttpConnection::end_file_body(int status) {
  close_file();
  if (status != 0) {
    // The head promised a length: the only honest way out is to close the connection.
    close(std::string("file send failed: ") + uv_strerror(status));
    return;
  }
  complete_response();
}

void HttpConnection::close_file() {
  if (file_fd_ < 0) return;
  auto* req = new uv_fs_t;
  req->data = this;
  retain();
  int rc = uv_fs_close(loop_.loop(), req, file_fd_, [](uv_fs_t* r) {
    auto* self = static_cast<HttpConnection*>(r->data);
    uv_fs_req_cleanup(r);
    delete r;
    self->release();
  });
  if (rc != 0) {
    release();
    delete req;
    ::close(file_fd_);
  }
  file_fd_ = -1;
}

}  // namespace sluice::server
