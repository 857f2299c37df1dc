#include "server/http/file_responder.hpp"

#include <unistd.h>

#include <memory>
#include <optional>

#include "server/http/connection.hpp"
#include "server/http/file_lookup.hpp"
#include "server/http/service.hpp"
#include "server/http/small_file_cache.hpp"
#include "server/http/util.hpp"
#include "server/io/logging.hpp"

namespace sluice::server {

namespace {

// Closes a file on the threadpool; the connection is kept (not open: it may close meanwhile)
// until that is done, like any work on its behalf.
struct FileClose {
  explicit FileClose(StreamSocket* s) : keep(s) {}
  uv_fs_t req{};
  StreamSocket::Ref keep;
};

void close_file_async(HttpConnection& conn, uv_file fd) {
  auto* job = new FileClose(&conn);
  job->req.data = job;
  int rc = uv_fs_close(conn.loop_context().loop(), &job->req, fd, [](uv_fs_t* r) {
    uv_fs_req_cleanup(r);
    delete static_cast<FileClose*>(r->data);
  });
  if (rc != 0) {
    delete job;
    ::close(fd);
  }
}

}  // namespace

// The file lookup on libuv's threadpool (file_lookup.hpp). The job keeps the connection, and so
// its responder, until it is done.
struct FileResponder::OpenJob {
  explicit OpenJob(FileResponder* r) : keep(&r->conn_), owner(r) {}

  uv_work_t req{};
  StreamSocket::Ref keep;
  FileResponder* owner;
  std::string root;
  bool follow_symlinks = true;
  std::string rel;
  uint64_t queued_ms = 0;             // the check is at least this recent
  std::optional<FileIdentity> known;  // the cache's version of the file, its bytes and head lines
  Slice known_body;
  std::shared_ptr<const HttpFileMeta> known_meta;
  FileLookup found;

  static void work(uv_work_t* req);
  static void after(uv_work_t* req, int status);
};

void FileResponder::OpenJob::work(uv_work_t* req) {
  auto* job = static_cast<OpenJob*>(req->data);
  job->found = lookup_file(job->root, job->rel, job->follow_symlinks, SmallFileCache::kMaxFileBytes, job->known);
}

void FileResponder::OpenJob::after(uv_work_t* req, int) {
  std::unique_ptr<OpenJob> job(static_cast<OpenJob*>(req->data));
  HttpConnection& conn = job->owner->conn_;
  if (conn.closing()) {
    if (job->found.fd >= 0) close_file_async(conn, job->found.fd);
    return;
  }
  job->owner->on_opened(*job);
}

void FileResponder::start(const config::AppConfig& app, const std::string& decoded, AccessTicket ticket) {
  ticket_ = std::move(ticket);
  auto rel = http_file_relative_path(decoded);
  if (!rel) {
    SLUICE_LOG_INFO("conn={} proto=http peer={} event=file_refused app={} path=\"{}\" reason=\"{}\"", conn_.id(),
                    conn_.peer(), app.name, conn_.request().path, rel.error().context);
    return conn_.send_error(404, "no such file", false, kHttpCors);
  }
  SharedFileCache& cache = conn_.service().file_cache();
  const uint64_t now = conn_.loop_context().now_ms();
  if (auto f = cache.find_fresh(app.root, app.follow_symlinks, *rel, now)) {
    return answer_from_memory(*f->meta, f->body);
  }
  if (auto why = cache.known_missing(app.root, app.follow_symlinks, *rel, now)) {
    SLUICE_LOG_INFO("conn={} proto=http peer={} event=file_refused path=\"{}\" reason=\"{}\"", conn_.id(), conn_.peer(),
                    conn_.request().path, *why);
    return conn_.send_error(404, "no such file", false, kHttpCors);
  }
  auto* job = new OpenJob(this);
  job->req.data = job;
  job->root = app.root;
  job->follow_symlinks = app.follow_symlinks;
  job->rel = std::move(*rel);
  job->queued_ms = now;
  if (auto stale = cache.find(app.root, app.follow_symlinks, job->rel)) {
    job->known = stale->id;
    job->known_body = std::move(stale->body);
    job->known_meta = std::move(stale->meta);
  }
  int rc = uv_queue_work(conn_.loop_context().loop(), &job->req, &OpenJob::work, &OpenJob::after);
  if (rc != 0) {
    delete job;
    conn_.send_error(500, "cannot queue the file lookup", false, kHttpCors);
  }
}

void FileResponder::on_opened(OpenJob& job) {
  SharedFileCache& cache = conn_.service().file_cache();
  FileLookup& found = job.found;
  if (found.status != 0) {
    // Removed, or no longer reachable: a missing name is remembered as missing for a while too.
    if (found.status == 404) {
      cache.put_missing(job.root, job.follow_symlinks, job.rel, found.error, job.queued_ms);
    } else {
      cache.erase(job.root, job.follow_symlinks, job.rel);
    }
    SLUICE_LOG_INFO("conn={} proto=http peer={} event=file_refused path=\"{}\" reason=\"{}\"", conn_.id(), conn_.peer(),
                    conn_.request().path, found.error);
    return conn_.send_error(found.status, found.status == 403 ? "forbidden" : "no such file", false, kHttpCors);
  }
  if (found.unchanged) {
    // Still the cached version: fresh again (or back in, if it was evicted or replaced by an older
    // check meanwhile; put() keeps what a later check found).
    if (!cache.revalidated(job.root, job.follow_symlinks, job.rel, *job.known, job.queued_ms)) {
      cache.put(job.root, job.follow_symlinks, job.rel, CachedFile{*job.known, job.known_body.share(), job.known_meta},
                job.queued_ms);
    }
    return answer_from_memory(*job.known_meta, job.known_body);
  }
  if (found.fd < 0) {
    // Read whole: cached unless it changed size while it was read.
    if (found.whole) {
      cache.put(job.root, job.follow_symlinks, job.rel, CachedFile{found.id, found.body.share(), found.meta},
                job.queued_ms);
    } else {
      cache.erase(job.root, job.follow_symlinks, job.rel);
    }
    return answer_from_memory(*found.meta, found.body);
  }
  cache.erase(job.root, job.follow_symlinks, job.rel);  // too large for it now
  fd_ = found.fd;
  HttpFileReply reply = http_file_reply(conn_.request(), *found.meta);
  if (reply.status == 304) {
    close_file();
    return conn_.send_simple(304, {}, {}, reply.headers);
  }
  if (!reply.error.empty()) {
    close_file();
    return conn_.send_error(reply.status, reply.error, false, reply.headers);
  }
  conn_.write_head(reply.status, reply.headers, HttpConnection::Body::Length, reply.length);
  if (conn_.head_only() || reply.length == 0) {
    close_file();
    stage_ = Stage::Done;
    return conn_.finish_response();
  }
  offset_ = reply.first;
  length_ = reply.length;
  stage_ = Stage::Head;  // the body starts once the head is written (on_written)
  conn_.request_flush();
}

void FileResponder::answer_from_memory(const HttpFileMeta& meta, const Slice& body) {
  stage_ = Stage::Done;
  close_file();
  HttpFileReply reply = http_file_reply(conn_.request(), meta);
  if (reply.status == 304) return conn_.send_simple(304, {}, {}, reply.headers);
  if (!reply.error.empty()) return conn_.send_error(reply.status, reply.error, false, reply.headers);
  // Head and body leave in the same write: the body is queued behind the head, not copied.
  conn_.write_head(reply.status, reply.headers, HttpConnection::Body::Length, reply.length);
  if (!conn_.head_only() && reply.length > 0) conn_.queue_body(body.share(reply.first, reply.length));
  conn_.finish_response();
}

void FileResponder::on_written() {
  if (stage_ == Stage::Head) start_body();
}

void FileResponder::start_body() {
  stage_ = Stage::Body;
  int rc = conn_.send_file(fd_, offset_, length_, [this](int status) { end_body(status); });
  if (rc != 0) conn_.close(std::string("cannot send the file: ") + uv_strerror(rc));
}

void FileResponder::end_body(int status) {
  stage_ = Stage::Done;
  close_file();
  if (status != 0) {
    // The head promised a length: the only honest way out is to close the connection.
    conn_.close(std::string("file send failed: ") + uv_strerror(status));
    return;
  }
  conn_.finish_response();
}

void FileResponder::close_file() {
  ticket_.end();
  if (fd_ < 0) return;
  close_file_async(conn_, fd_);
  fd_ = -1;
}

}  // namespace sluice::server
