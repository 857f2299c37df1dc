#include "server/http/upload_responder.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "server/access/query.hpp"
#include "server/access/token.hpp"
#include "server/http/connection.hpp"
#include "server/http/service.hpp"
#include "server/http/util.hpp"
#include "server/io/guard_counters.hpp"
#include "server/io/logging.hpp"
#include "server/vod/confined_open.hpp"

namespace sluice::server {

namespace {

// Body bytes waiting for the disk before reading from the socket pauses (also one write's size).
constexpr size_t kUploadBufferBytes = 1 << 20;
// A folder or file name is at most NAME_MAX bytes, and the temporary file next to the target is
// ".{name}.upload-{16 hex digits}" (OpenJob::work): the name must leave room for that.
constexpr size_t kTempNameExtra = 1 + std::char_traits<char>::length(".upload-") + 16;
constexpr size_t kMaxUploadFileName = NAME_MAX - kTempNameExtra;

// Why a name is too long for the file system, or empty when it is not.
std::string overlong_name(std::string_view path) {
  if (path.size() > kHttpMaxPathLength) return "path longer than " + std::to_string(kHttpMaxPathLength) + " bytes";
  size_t slash = path.rfind('/');
  std::string_view base = slash == std::string_view::npos ? path : path.substr(slash + 1);
  if (base.size() > kMaxUploadFileName) return "file name longer than " + std::to_string(kMaxUploadFileName) + " bytes";
  size_t start = 0;
  while (slash != std::string_view::npos && start < slash) {
    size_t end = path.find('/', start);
    if (end - start > NAME_MAX) return "folder name longer than " + std::to_string(NAME_MAX) + " bytes";
    start = end + 1;
  }
  return {};
}

int status_for_errno(int err) {
  switch (err) {
    case EACCES:
    case EPERM:
    case EROFS: return 403;
    case ENOSPC:
    case EDQUOT: return 507;
    case ENAMETOOLONG:  // http_judge_upload refuses such names first; a long root may still hit it
      return 414;
    default: return 500;
  }
}

// Publishes the finished temporary file under its name in one step, both names relative to the
// folder's descriptor. no_replace (If-None-Match: *): an existing file is never replaced, even one
// created since the check (EEXIST). 0, or -1 with errno set.
int publish(int dirfd, const std::string& temp, const std::string& name, bool no_replace) {
  if (!no_replace) return ::renameat(dirfd, temp.c_str(), dirfd, name.c_str());
  if (::renameat2(dirfd, temp.c_str(), dirfd, name.c_str(), RENAME_NOREPLACE) == 0) return 0;
  if (errno != EINVAL) return -1;
  // A file system without RENAME_NOREPLACE: a hard link refuses an existing name just as well.
  if (::linkat(dirfd, temp.c_str(), dirfd, name.c_str(), 0) != 0) return -1;
  ::unlinkat(dirfd, temp.c_str(), 0);  // the file is published; a leftover name is only untidy
  return 0;
}

}  // namespace

HttpUploadVerdict http_judge_upload(const HttpRequest& req, std::string_view rest, const config::HttpConfig& cfg) {
  HttpUploadVerdict v;
  auto refuse = [&v](int status, std::string message) {
    v.status = status;
    v.message = std::move(message);
    return v;
  };
  std::string token = bearer_token(req.header("authorization"));
  if (token.empty()) {
    if (auto q = query_param(req.query, "token")) token = *q;
  }
  if (token.empty()) {
    v.headers = "WWW-Authenticate: Bearer realm=\"sluice\"\r\n";
    return refuse(401, "uploads need a token (Authorization: Bearer ...)");
  }
  if (!token_equal(token, cfg.upload_token)) {
    v.log_reason = "wrong token";
    return refuse(403, "wrong token");
  }
  std::string decoded;
  if (!http_percent_decode(rest, decoded)) {
    v.bad_name = true;
    return refuse(400, "bad percent-encoding");
  }
  std::string ext = http_extension_of(decoded);
  if (std::find(cfg.upload_extensions.begin(), cfg.upload_extensions.end(), ext) == cfg.upload_extensions.end())
    return refuse(415, "this file type may not be uploaded (http.upload.extensions)");
  // Before the other name rules: a name the file system cannot hold is the client's error (414),
  // not the server's failure to create it.
  if (std::string why = overlong_name(decoded); !why.empty()) {
    v.log_reason = why;
    v.bad_name = true;
    return refuse(414, "file name too long: " + why);
  }
  auto rel = http_file_relative_path(decoded);
  if (!rel) {
    v.log_reason = rel.error().context;
    v.bad_name = true;
    return refuse(400, "invalid file name: " + rel.error().context);
  }
  if (req.content_length > cfg.upload_max_size)
    return refuse(413, "larger than http.upload.max_size (" + std::to_string(cfg.upload_max_size) + " bytes)");
  v.rel = std::move(*rel);
  return v;
}

// ---------------------------------------------------------------------------------------------
// The temporary file. While the responder owns it, each completed operation goes back to the
// responder; once it is aborted it belongs to itself: the operation in flight completes, then the
// file is closed and unlinked, and the object deletes itself. At most one operation is in flight.

enum class UploadResponder::Stage : uint8_t { Idle, Write, Fsync, Close, Rename, Unlink };

struct UploadResponder::Upload {
  uv_fs_t req{};
  uv_loop_t* loop = nullptr;
  UploadResponder* owner = nullptr;  // nullptr once aborted
  Stage stage = Stage::Idle;
  uv_file fd = -1;
  // The target's folder, opened confined below the root (server/vod/confined_open.hpp): the
  // temporary file is created, renamed and removed only relative to it, so a folder or symlink
  // swapped along the path afterwards cannot move any of it out of the root.
  UniqueFd dir;
  std::string name;         // the target's name in `dir`
  std::string temp_name;    // the temporary file's name in `dir`
  std::string claim_key;    // the service's claim: the folder's real path and the name
  bool no_replace = false;  // If-None-Match: *
  // Renames and removals relative to `dir` have no uv_fs_* call: they run as threadpool work.
  uv_work_t work{};
  int work_result = 0;
  std::string location;  // the request path, for the Location header and logs
  std::string root;      // the app's root and the file's path below it (the download cache's key)
  std::string rel;
  bool claimed = false;    // holds the service's claim on claim_key
  bool replaced = false;   // the target existed
  bool receiving = false;  // the parser feeds the body
  bool body_done = false;  // the whole body has been received
  bool temp_removed = false;
  uint64_t received = 0;
  uint64_t written = 0;
  uint64_t started_ms = 0;
  // Body bytes being received, and those being written (swapped when a write completes).
  std::vector<char> filling;
  std::vector<char> inflight;
  size_t inflight_done = 0;

  // Starts the next cleanup step (close the file, then unlink it); false when none is left.
  bool cleanup_step() {
    while (stage == Stage::Idle) {
      req.data = this;
      int rc = 0;
      if (fd >= 0) {
        stage = Stage::Close;
        rc = uv_fs_close(loop, &req, fd, &UploadResponder::on_fs);
        if (rc != 0) fd = -1;
      } else if (!temp_removed && !temp_name.empty()) {
        stage = Stage::Unlink;
        rc = queue_dir_work();
        if (rc != 0) temp_removed = true;
      } else {
        return false;
      }
      if (rc != 0) stage = Stage::Idle;  // on to the next step
    }
    return true;
  }

  // Starts the rename (Stage::Rename) or the removal (Stage::Unlink) of the temporary file.
  int queue_dir_work() {
    work.data = this;
    return uv_queue_work(loop, &work, &UploadResponder::dir_work, &UploadResponder::on_dir_work);
  }

  // The upload is over: what is left is its cleanup, on its own.
  static void discard(Upload* u) {
    u->owner = nullptr;
    u->receiving = false;
    u->filling.clear();
    if (u->stage != Stage::Write) u->inflight.clear();  // a write in flight still reads it
    if (!u->cleanup_step()) delete u;
  }
};

void UploadResponder::on_fs(uv_fs_t* req) {
  auto* u = static_cast<Upload*>(req->data);
  ssize_t result = req->result;
  uv_fs_req_cleanup(req);
  done(u, result);
}

void UploadResponder::dir_work(uv_work_t* req) {
  auto* u = static_cast<Upload*>(req->data);
  int rc = u->stage == Stage::Unlink ? ::unlinkat(u->dir.get(), u->temp_name.c_str(), 0)
                                     : publish(u->dir.get(), u->temp_name, u->name, u->no_replace);
  u->work_result = rc == 0 ? 0 : -errno;  // libuv's error codes are negated errnos on Linux
}

void UploadResponder::on_dir_work(uv_work_t* req, int status) {
  auto* u = static_cast<Upload*>(req->data);
  done(u, status != 0 ? status : u->work_result);
}

void UploadResponder::done(Upload* u, ssize_t result) {
  Stage stage = u->stage;
  u->stage = Stage::Idle;
  if (u->owner) return u->owner->on_stored(stage, result);
  if (stage == Stage::Close) u->fd = -1;
  if (stage == Stage::Unlink) u->temp_removed = true;
  if (!u->cleanup_step()) delete u;
}

UploadResponder::~UploadResponder() {
  // close() has aborted an upload in progress already; this only hands over what might remain.
  if (upload_) Upload::discard(upload_);
}

// ---------------------------------------------------------------------------------------------
// Checking the target and creating the temporary file, on libuv's threadpool. The job keeps the
// connection, and so its responder, until it is done.

struct UploadResponder::OpenJob {
  explicit OpenJob(UploadResponder* r) : keep(&r->conn_), owner(r) {}

  uv_work_t req{};
  StreamSocket::Ref keep;
  UploadResponder* owner;
  std::string root;
  std::string rel;
  bool follow_symlinks = true;
  bool if_none_match_star = false;
  uint64_t nonce = 0;
  // Results.
  int status = 0;
  std::string error;
  uv_file fd = -1;
  UniqueFd dir;
  std::string name;
  std::string temp_name;
  std::string claim_key;
  bool replaced = false;

  static void work(uv_work_t* req);
  static void after(uv_work_t* req, int status);
};

void UploadResponder::OpenJob::work(uv_work_t* req) {
  auto* job = static_cast<OpenJob*>(req->data);
  auto root = open_media_root(job->root);
  if (!root) {
    job->status = 500;
    job->error = "the media root does not exist";
    return;
  }
  size_t slash = job->rel.rfind('/');
  std::string folder = slash == std::string::npos ? std::string() : job->rel.substr(0, slash);
  job->name = slash == std::string::npos ? job->rel : job->rel.substr(slash + 1);
  // The folder is resolved once, confined; everything after is relative to its descriptor.
  auto dir = confined_open_dir(root->get(), folder, {.follow_symlinks = job->follow_symlinks});
  if (!dir) {
    const Error& e = dir.error();
    if (e.code == Errc::NotFound) {
      job->status = 409;
      job->error = "the folder does not exist (uploads do not create folders)";
    } else if (e.code == Errc::Rejected) {
      job->status = 403;  // a symlink that leads out of the root, or any with follow_symlinks: false
      job->error = "the folder is outside the media root (" + e.context + ")";
    } else {
      job->status = e.context == kConfinedPermissionDenied ? 403 : 500;
      job->error = "cannot open the folder: " + e.context;
    }
    return;
  }
  int dirfd = dir->get();
  struct stat st {};
  if (::fstatat(dirfd, job->name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
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
  job->temp_name = "." + job->name + suffix;
  int fd = ::openat(dirfd, job->temp_name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) {
    job->status = status_for_errno(errno);
    job->error = std::string("cannot create the temporary file: ") + std::strerror(errno);
    return;
  }
  job->fd = fd;
  // One upload per file: two paths to one folder (a symlink inside the root) share a claim.
  std::string real = descriptor_path(dirfd);
  job->claim_key = real.empty() ? job->root + "/" + job->rel : real + "/" + job->name;
  job->dir = std::move(*dir);
}

void UploadResponder::OpenJob::after(uv_work_t* req, int) {
  std::unique_ptr<OpenJob> job(static_cast<OpenJob*>(req->data));
  job->owner->on_opened(*job);
}

// ---------------------------------------------------------------------------------------------
// The answer.

void UploadResponder::start(const config::AppConfig& app, std::string_view rest) {
  const HttpRequest& req = conn_.request();
  HttpUploadVerdict v = http_judge_upload(req, rest, conn_.loop_context().config().http);
  if (v.status != 0) {
    if (v.bad_name) GuardCounters::bump(GuardEvent::UploadBadName);
    if (!v.log_reason.empty()) {
      SLUICE_LOG_WARN("conn={} proto=http peer={} event=upload_refused path=\"{}\" reason=\"{}\"", conn_.id(),
                      conn_.peer(), req.path, v.log_reason);
    }
    return conn_.send_error(v.status, v.message, true, v.headers);
  }
  auto* job = new OpenJob(this);
  job->req.data = job;
  job->root = app.root;
  job->rel = std::move(v.rel);
  job->follow_symlinks = app.follow_symlinks;
  const std::string* inm = req.header("if-none-match");
  job->if_none_match_star = inm && *inm == "*";
  std::random_device rd;
  job->nonce = (uint64_t{rd()} << 32) ^ rd() ^ (conn_.id() << 48);
  if (uv_queue_work(conn_.loop_context().loop(), &job->req, &OpenJob::work, &OpenJob::after) != 0) {
    delete job;
    conn_.send_error(500, "cannot queue the upload", true);
  }
}

void UploadResponder::on_opened(OpenJob& job) {
  const HttpRequest& req = conn_.request();
  if (job.status != 0 && job.fd < 0) {
    if (conn_.closing()) return;
    SLUICE_LOG_WARN("conn={} proto=http peer={} event=upload_refused path=\"{}\" reason=\"{}\"", conn_.id(),
                    conn_.peer(), req.path, job.error);
    return conn_.send_error(job.status, job.error, true);
  }
  upload_ = new Upload;
  Upload& u = *upload_;
  u.loop = conn_.loop_context().loop();
  u.owner = this;
  u.fd = job.fd;
  u.dir = std::move(job.dir);
  u.name = std::move(job.name);
  u.temp_name = std::move(job.temp_name);
  u.claim_key = std::move(job.claim_key);
  u.no_replace = job.if_none_match_star;
  u.replaced = job.replaced;
  u.location = req.path;
  u.root = job.root;
  u.rel = job.rel;
  u.started_ms = conn_.loop_context().now_ms();
  if (conn_.closing()) return abort(0, "connection closed");
  if (!conn_.service().uploads().claim(u.claim_key)) return abort(409, "another upload of this file is in progress");
  u.claimed = true;
  SLUICE_LOG_INFO("conn={} proto=http peer={} event=upload_start path=\"{}\" length={} replace={}", conn_.id(),
                  conn_.peer(), req.path, req.chunked ? std::string("chunked") : std::to_string(req.content_length),
                  u.replaced ? "yes" : "no");
  conn_.send_continue();
  u.receiving = true;
  conn_.note_body_progress();
  conn_.resume_input();  // the body waits in the input buffer or the socket
}

bool UploadResponder::takes_body() const { return upload_ && upload_->receiving; }

bool UploadResponder::body_backlogged() const { return upload_ && upload_->filling.size() >= kUploadBufferBytes; }

int UploadResponder::on_body(const char* at, size_t len) {
  Upload& u = *upload_;
  u.received += len;
  if (u.received > conn_.loop_context().config().http.upload_max_size) return 413;
  u.filling.insert(u.filling.end(), at, at + len);
  // The disk is slower than the network: let TCP push back until this buffer is written.
  if (body_backlogged()) conn_.pause_input();
  step();
  return 0;
}

void UploadResponder::on_body_end() {
  if (!takes_body()) return;
  upload_->receiving = false;
  upload_->body_done = true;
  step();  // the whole body is in: finish the file
}

void UploadResponder::on_tick(uint64_t now) {
  if (takes_body() && now - conn_.last_read_ms() > HttpRequestCycle::kBodyTimeoutMs) {
    abort(408, "the upload body stalled");
  }
}

void UploadResponder::step() {
  if (!upload_) return;
  Upload& u = *upload_;
  if (u.stage != Stage::Idle) return;
  u.req.data = &u;
  int rc = 0;
  if (u.inflight_done >= u.inflight.size() && !u.filling.empty()) {
    std::swap(u.inflight, u.filling);
    u.filling.clear();
    u.inflight_done = 0;
  }
  if (u.inflight_done < u.inflight.size()) {
    uv_buf_t b =
        uv_buf_init(u.inflight.data() + u.inflight_done, static_cast<unsigned>(u.inflight.size() - u.inflight_done));
    u.stage = Stage::Write;
    rc = uv_fs_write(u.loop, &u.req, u.fd, &b, 1, static_cast<int64_t>(u.written), &UploadResponder::on_fs);
  } else if (u.body_done && u.fd >= 0) {
    u.stage = Stage::Fsync;  // durable before it replaces anything
    rc = uv_fs_fsync(u.loop, &u.req, u.fd, &UploadResponder::on_fs);
  } else {
    return;  // waiting for body bytes
  }
  if (rc != 0) {
    u.stage = Stage::Idle;
    abort(500, std::string("cannot write the file: ") + uv_strerror(rc));
  }
}

void UploadResponder::on_stored(Stage stage, ssize_t result) {
  Upload& u = *upload_;
  if (stage == Stage::Close) u.fd = -1;  // closed even when close reports an error
  if (result < 0) {
    int err = static_cast<int>(result);
    // RENAME_NOREPLACE met a file created since the check.
    if (stage == Stage::Rename && err == UV_EEXIST) return abort(412, "the file exists (If-None-Match: *)");
    int status = err == UV_ENOSPC ? 507 : 500;
    return abort(status, std::string("cannot store the file: ") + uv_strerror(err));
  }
  u.req.data = &u;
  int rc = 0;
  switch (stage) {
    case Stage::Write: {
      u.written += static_cast<uint64_t>(result);
      u.inflight_done += static_cast<size_t>(result);
      conn_.note_body_progress();  // progress: the stall timeout restarts
      bool was_full = conn_.input_paused();
      step();
      if (was_full && !body_backlogged()) conn_.resume_input();  // parse what waits, then read again
      return;
    }
    case Stage::Fsync:
      u.stage = Stage::Close;
      rc = uv_fs_close(u.loop, &u.req, u.fd, &UploadResponder::on_fs);
      break;
    case Stage::Close:
      u.stage = Stage::Rename;
      rc = u.queue_dir_work();
      break;
    case Stage::Rename: return finish();
    case Stage::Idle:
    case Stage::Unlink: return;
  }
  if (rc != 0) {
    u.stage = Stage::Idle;
    abort(500, std::string("cannot store the file: ") + uv_strerror(rc));
  }
}

void UploadResponder::finish() {
  std::unique_ptr<Upload> u(upload_);
  upload_ = nullptr;
  if (u->claimed) conn_.service().uploads().release(u->claim_key);
  // Downloads of it, on every loop, see the new file at once, not within the cache's second.
  conn_.service().file_cache().forget(u->root, u->rel);
  SLUICE_LOG_INFO("conn={} proto=http peer={} event=upload_done path=\"{}\" bytes={} replaced={} duration_ms={}",
                  conn_.id(), conn_.peer(), u->location, u->written, u->replaced ? "yes" : "no",
                  conn_.loop_context().now_ms() - u->started_ms);
  if (conn_.closing()) return;
  if (!u->replaced) {
    conn_.send_simple(201, "text/plain; charset=utf-8", "201 Created: " + u->location + "\n",
                      "Location: " + u->location + "\r\nAccess-Control-Allow-Origin: *\r\n");
  } else {
    conn_.send_simple(204, {}, {}, "Access-Control-Allow-Origin: *\r\n");
  }
}

void UploadResponder::abort(int status, std::string_view message) {
  if (!upload_) return;
  Upload* u = upload_;
  upload_ = nullptr;
  SLUICE_LOG_WARN("conn={} proto=http peer={} event=upload_aborted path=\"{}\" received={} reason=\"{}\"", conn_.id(),
                  conn_.peer(), u->location, u->received, message);
  if (u->claimed) {
    conn_.service().uploads().release(u->claim_key);
    u->claimed = false;
  }
  Upload::discard(u);
  // Answer at once; the cleanup goes on by itself.
  if (status != 0 && !conn_.closing() && conn_.state() == RequestState::Responding)
    conn_.send_error(status, message, true);
}

}  // namespace sluice::server
