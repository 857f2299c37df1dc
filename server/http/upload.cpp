// HttpConnection: streamed upload, PUT /{vod-app}/{path} (see http_upload.hpp for the file rules).
//
// 1. The request is judged on its head, before any body byte is read: uploads on (a token is
//    configured), the token (Authorization: Bearer, or ?token=), the name (the download rules plus
//    http.upload.extensions), the declared size (http.upload.max_size). Refusals close the
//    connection, since the body is left unread.
// 2. A threadpool job checks the folder (inside the root, existing), the target (absent or a
//    regular file; If-None-Match: * refuses to replace) and creates the temporary file.
// 3. "100 Continue" if the client asked; the body then streams into the file, one write in flight,
//    reading from the socket pausing while a buffer's worth waits for the disk.
// 4. Body complete: fsync, close, rename over the target; 201 Created (or 204 when replacing).
//    Any failure or an abort (client gone, too large, stalled): close and unlink the temporary file.
#include "server/http/upload.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <random>

#include "server/access/query.hpp"
#include "server/access/token.hpp"
#include "server/http/connection.hpp"
#include "server/http/service.hpp"
#include "server/http/util.hpp"
#include "server/io/logging.hpp"

namespace sluice::server {

namespace {

// Body bytes waiting for the disk before reading from the socket pauses (also one write's size).
constexpr size_t kUploadBufferBytes = 1 << 20;

// Compares in time that depends only on the lengths, not on where the first difference is.
bool starts_with_nocase(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(s[i])) != std::tolower(static_cast<unsigned char>(prefix[i])))
      return false;
  return true;
}

std::string extension_of(std::string_view path) {
  size_t slash = path.rfind('/');
  size_t dot = path.rfind('.');
  if (dot == std::string_view::npos || (slash != std::string_view::npos && dot < slash)) return {};
  std::string ext(path.substr(dot + 1));
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}

int status_for_errno(int err) {
  switch (err) {
    case EACCES:
    case EPERM:
    case EROFS:
      return 403;
    case ENOSPC:
    case EDQUOT:
      return 507;
    default:
      return 500;
  }
}

}  // namespace

// Checks the target and creates the temporary file, on libuv's threadpool.
struct HttpUploadJob {
  uv_work_t req{};
  HttpConnection* conn = nullptr;
  std::string root;
  std::string rel;
  bool if_none_match_star = false;
  uint64_t nonce = 0;
  // Results.
  int status = 0;
  std::string error;
  uv_file fd = -1;
  std::string final_path;
  std::string temp_path;
  bool replaced = false;

  static void work(uv_work_t* req);
  static void after(uv_work_t* req, int status);
};

void HttpUploadJob::work(uv_work_t* req) {
  auto* job = static_cast<HttpUploadJob*>(req->data);
  char root_real[PATH_MAX];
  if (!::realpath(job->root.c_str(), root_real)) {
    job->status = 500;
    job->error = "the media root does not exist";
    return;
  }
  std::string prefix(root_real);
  if (prefix.back() != '/') prefix += '/';
  size_t slash = job->rel.rfind('/');
  std::string dir = slash == std::string::npos ? std::string() : job->rel.substr(0, slash);
  std::string base = slash == std::string::npos ? job->rel : job->rel.substr(slash + 1);
  char parent_real[PATH_MAX];
  struct stat st {};
  if (!::realpath((prefix + dir).c_str(), parent_real) || ::stat(parent_real, &st) != 0 || !S_ISDIR(st.st_mode)) {
    job->status = 409;
    job->error = "the folder does not exist (uploads do not create folders)";
    return;
  }
  std::string parent(parent_real);
  if (parent + "/" != prefix && std::string_view(parent).substr(0, prefix.size()) != prefix) {
    job->status = 403;  // a symlinked folder that leads out of the root
    job->error = "the folder is outside the media root";
    return;
  }
  job->final_path = parent + "/" + base;
  if (::lstat(job->final_path.c_str(), &st) == 0) {
    if (!S_ISREG(st.st_mode)) {
      job->status = 409;
      job->error = "the target exists and is not a regular file";
      return;
    }
    if (job->if_none_match_star) {
      job->status = 412;
      job->error = "the file exists (If-None-Match: *)";
      return;
    }
    job->replaced = true;
  }
  char suffix[64];
  std::snprintf(suffix, sizeof suffix, ".upload-%llx", static_cast<unsigned long long>(job->nonce));
  job->temp_path = parent + "/." + base + suffix;
  int fd = ::open(job->temp_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) {
    job->status = status_for_errno(errno);
    job->error = std::string("cannot create the temporary file: ") + std::strerror(errno);
    return;
  }
  job->fd = fd;
}

void HttpUploadJob::after(uv_work_t* req, int) {
  auto* job = static_cast<HttpUploadJob*>(req->data);
  HttpConnection* c = job->conn;
  auto done = c->take_retained();
  c->on_upload_opened(*job);
  delete job;
}

bool HttpConnection::upload_receiving() const { return upload_ && upload_->receiving && !upload_->aborted; }

bool HttpConnection::upload_backpressure() const { return upload_ && upload_->filling.size() >= kUploadBufferBytes; }

void HttpConnection::handle_upload(const config::AppConfig& app, std::string_view rest) {
  const config::HttpConfig& cfg = loop_.config().http;
  activity_ = Activity::Upload;
  std::string token;
  const std::string* auth = req_.header("authorization");
  if (auth && starts_with_nocase(*auth, "Bearer ")) {
    token = auth->substr(7);
    while (!token.empty() && token.front() == ' ') token.erase(0, 1);
  } else if (auto q = query_param(req_.query, "token")) {
    token = *q;
  }
  if (token.empty())
    return send_error(401, "uploads need a token (Authorization: Bearer ...)", true,
                      "WWW-Authenticate: Bearer realm=\"sluice\"\r\n");
  if (!token_equal(token, cfg.upload_token)) {
    SLUICE_LOG_WARN("conn={} proto=http peer={} event=upload_refused path=\"{}\" reason=\"wrong token\"", id(), peer(),
                    req_.path);
    return send_error(403, "wrong token", true);
  }
  std::string decoded;
  if (!http_percent_decode(rest, decoded)) return send_error(400, "bad percent-encoding", true);
  std::string ext = extension_of(decoded);
  if (std::find(cfg.upload_extensions.begin(), cfg.upload_extensions.end(), ext) == cfg.upload_extensions.end())
    return send_error(415, "this file type may not be uploaded (http.upload.extensions)", true);
  auto rel = http_file_relative_path(decoded);
  if (!rel) {
    SLUICE_LOG_WARN("conn={} proto=http peer={} event=upload_refused path=\"{}\" reason=\"{}\"", id(), peer(), req_.path,
                    rel.error().context);
    return send_error(400, "invalid file name", true);
  }
  if (req_.content_length > cfg.upload_max_size)
    return send_error(413, "larger than http.upload.max_size (" + std::to_string(cfg.upload_max_size) + " bytes)",
                      true);
  auto* job = new HttpUploadJob;
  job->req.data = job;
  job->conn = this;
  job->root = app.root;
  job->rel = std::move(*rel);
  const std::string* inm = req_.header("if-none-match");
  job->if_none_match_star = inm && *inm == "*";
  std::random_device rd;
  job->nonce = (uint64_t{rd()} << 32) ^ rd() ^ (id() << 48);
  retain();
  if (uv_queue_work(loop_.loop(), &job->req, &HttpUploadJob::work, &HttpUploadJob::after) != 0) {
    release();
    delete job;
    send_error(500, "cannot queue the upload", true);
  }
}

void HttpConnection::on_upload_opened(HttpUploadJob& job) {
  if (job.status != 0 && job.fd < 0) {
    if (closing()) return;
    SLUICE_LOG_WARN("conn={} proto=http peer={} event=upload_refused path=\"{}\" reason=\"{}\"", id(), peer(), req_.path,
                    job.error);
    return send_error(job.status, job.error, true);
  }
  upload_ = std::make_unique<HttpUpload>();
  HttpUpload& u = *upload_;
  u.fd = job.fd;
  u.final_path = job.final_path;
  u.temp_path = job.temp_path;
  u.replaced = job.replaced;
  u.location = req_.path;
  u.started_ms = loop_.now_ms();
  if (closing()) return abort_upload(0, "connection closed");
  if (!service_.claim_upload(u.final_path)) return abort_upload(409, "another upload of this file is in progress");
  u.claimed = true;
  SLUICE_LOG_INFO("conn={} proto=http peer={} event=upload_start path=\"{}\" length={} replace={}", id(), peer(),
                  req_.path, req_.chunked ? std::string("chunked") : std::to_string(req_.content_length),
                  u.replaced ? "yes" : "no");
  const std::string* expect = req_.header("expect");
  if (expect && body_pending_) {
    static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
    out_.insert(out_.end(), kContinue.begin(), kContinue.end());
  }
  u.receiving = true;
  last_read_ms_ = loop_.now_ms();
  resume_input_ = true;  // the body waits in the input buffer or the socket
  request_flush();
}

int HttpConnection::on_upload_body(const char* at, size_t len) {
  HttpUpload& u = *upload_;
  u.received += len;
  if (u.received > loop_.config().http.upload_max_size) {
    error_status_ = 413;
    return 1;
  }
  u.filling.insert(u.filling.end(), at, at + len);
  if (upload_backpressure() && reading()) {
    // The disk is slower than the network: let TCP push back until this buffer is written.
    stop_reading();
  }
  upload_step();
  return 0;
}

void HttpConnection::upload_step() {
  if (!upload_) return;
  HttpUpload& u = *upload_;
  if (u.aborted || u.stage != HttpUpload::Stage::Idle) return;
  uv_loop_t* loop = loop_.loop();
  u.req.data = this;
  int rc = 0;
  if (u.inflight_done >= u.inflight.size() && !u.filling.empty()) {
    std::swap(u.inflight, u.filling);
    u.filling.clear();
    u.inflight_done = 0;
  }
  if (u.inflight_done < u.inflight.size()) {
    uv_buf_t b =
        uv_buf_init(u.inflight.data() + u.inflight_done, static_cast<unsigned>(u.inflight.size() - u.inflight_done));
    u.stage = HttpUpload::Stage::Write;
    rc = uv_fs_write(loop, &u.req, u.fd, &b, 1, static_cast<int64_t>(u.written), &HttpConnection::on_upload_fs);
  } else if (u.body_done && u.fd >= 0) {
    u.stage = HttpUpload::Stage::Fsync;  // durable before it replaces anything
    rc = uv_fs_fsync(loop, &u.req, u.fd, &HttpConnection::on_upload_fs);
  } else {
    return;  // waiting for body bytes
  }
  if (rc != 0) {
    u.stage = HttpUpload::Stage::Idle;
    return abort_upload(500, std::string("cannot write the file: ") + uv_strerror(rc));
  }
  retain();
}

void HttpConnection::on_upload_fs(uv_fs_t* req) {
  auto* self = static_cast<HttpConnection*>(req->data);
  ssize_t result = req->result;
  uv_fs_req_cleanup(req);
  auto done = self->take_retained();
  HttpUpload& u = *self->upload_;
  HttpUpload::Stage stage = u.stage;
  u.stage = HttpUpload::Stage::Idle;
  if (u.aborted) {
    if (stage == HttpUpload::Stage::Close) u.fd = -1;
    if (stage == HttpUpload::Stage::Unlink) u.temp_removed = true;
    self->abort_upload(u.abort_status, u.abort_message);  // the next cleanup step
    return;
  }
  if (result < 0) {
    int err = static_cast<int>(result);
    int status = err == UV_ENOSPC ? 507 : 500;
    return self->abort_upload(status, std::string("cannot store the file: ") + uv_strerror(err));
  }
  uv_loop_t* loop = self->loop_.loop();
  int rc = 0;
  switch (stage) {
    case HttpUpload::Stage::Write: {
      u.written += static_cast<uint64_t>(result);
      u.inflight_done += static_cast<size_t>(result);
      self->last_read_ms_ = self->loop_.now_ms();  // progress: the stall timeout restarts
      bool was_full = !self->reading();
      self->upload_step();
      if (was_full && !self->upload_backpressure()) {
        self->resume_input_ = true;  // parse what waits, then read the socket again
        self->request_flush();
      }
      return;
    }
    case HttpUpload::Stage::Fsync:
      u.stage = HttpUpload::Stage::Close;
      u.req.data = self;
      rc = uv_fs_close(loop, &u.req, u.fd, &HttpConnection::on_upload_fs);
      break;
    case HttpUpload::Stage::Close:
      u.fd = -1;
      u.stage = HttpUpload::Stage::Rename;
      u.req.data = self;
      rc = uv_fs_rename(loop, &u.req, u.temp_path.c_str(), u.final_path.c_str(), &HttpConnection::on_upload_fs);
      break;
    case HttpUpload::Stage::Rename:
      return self->finish_upload(u.replaced ? 204 : 201, "");
    case HttpUpload::Stage::Idle:
    case HttpUpload::Stage::Unlink:
      return;
  }
  if (rc != 0) {
    u.stage = HttpUpload::Stage::Idle;
    return self->abort_upload(500, std::string("cannot store the file: ") + uv_strerror(rc));
  }
  self->retain();
}

void HttpConnection::finish_upload(int status, std::string_view) {
  HttpUpload& u = *upload_;
  if (u.claimed) service_.release_upload(u.final_path);
  SLUICE_LOG_INFO("conn={} proto=http peer={} event=upload_done path=\"{}\" bytes={} replaced={} duration_ms={}", id(),
                  peer(), u.location, u.written, u.replaced ? "yes" : "no", loop_.now_ms() - u.started_ms);
  std::string location = u.location;
  response_body_bytes_ = 0;
  upload_.reset();
  if (closing()) return;
  if (status == 201) {
    send_simple(201, "text/plain; charset=utf-8", "201 Created: " + location + "\n",
                "Location: " + location + "\r\nAccess-Control-Allow-Origin: *\r\n");
  } else {
    send_simple(204, {}, {}, "Access-Control-Allow-Origin: *\r\n");
  }
}

void HttpConnection::abort_upload(int status, std::string_view message) {
  if (!upload_) return;
  HttpUpload& u = *upload_;
  u.receiving = false;
  if (!u.aborted) {
    u.aborted = true;
    u.abort_status = status;
    u.abort_message = std::string(message);
    SLUICE_LOG_WARN("conn={} proto=http peer={} event=upload_aborted path=\"{}\" received={} reason=\"{}\"", id(), peer(),
                    u.location, u.received, message);
    u.filling.clear();
    if (u.stage != HttpUpload::Stage::Write) u.inflight.clear();  // a write in flight still reads it
    if (u.claimed) {
      service_.release_upload(u.final_path);
      u.claimed = false;
    }
    // Answer at once; the cleanup below goes on with the connection kept alive by retain().
    if (status != 0 && !closing() && responding_) send_error(status, message, true);
  }
  if (u.stage != HttpUpload::Stage::Idle) return;  // on_upload_fs continues the cleanup
  uv_loop_t* loop = loop_.loop();
  u.req.data = this;
  int rc = 0;
  if (u.fd >= 0) {
    u.stage = HttpUpload::Stage::Close;
    rc = uv_fs_close(loop, &u.req, u.fd, &HttpConnection::on_upload_fs);
    if (rc != 0) u.fd = -1;
  } else if (!u.temp_removed && !u.temp_path.empty()) {
    u.stage = HttpUpload::Stage::Unlink;
    rc = uv_fs_unlink(loop, &u.req, u.temp_path.c_str(), &HttpConnection::on_upload_fs);
    if (rc != 0) u.temp_removed = true;
  } else {
    upload_.reset();
    return;
  }
  if (rc != 0) {
    u.stage = HttpUpload::Stage::Idle;
    return abort_upload(status, message);
  }
  retain();
}

}  // namespace sluice::server
