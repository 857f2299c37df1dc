#include "server/http/file_responder.hpp"

#include <unistd.h>

#include <memory>

#include "server/http/connection.hpp"
#include "server/http/util.hpp"
#include "server/io/logging.hpp"
#include "server/vod/confined_open.hpp"
#include "server/vod/path.hpp"

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

HttpFileReply http_file_reply(const HttpRequest& req, std::string_view rel, uint64_t size, int64_t mtime_ns) {
  HttpFileReply out;
  HttpValidators v{http_make_etag(size, mtime_ns), mtime_ns / 1'000'000'000};
  std::string validators = "ETag: " + v.etag + "\r\nLast-Modified: " + http_format_date(v.mtime_s) + "\r\n";
  switch (http_evaluate_preconditions(req, v)) {
    case HttpPrecondition::NotModified:
      out.status = 304;
      out.headers = validators + std::string(kHttpCors);
      return out;
    case HttpPrecondition::Failed:
      out.status = 412;
      out.error = "precondition failed";
      out.headers = validators + std::string(kHttpCors);
      return out;
    case HttpPrecondition::Proceed:
      break;
  }
  std::string headers = "Content-Type: " + std::string(http_content_type_for(rel)) + "\r\nAccept-Ranges: bytes\r\n";
  headers += validators;
  headers += kHttpCors;
  out.length = size;
  const std::string* range = req.method == "GET" ? req.header("range") : nullptr;
  if (range && req.header_count("range") == 1 && http_if_range_allows(req, v)) {
    HttpByteRange r;
    switch (http_parse_range(*range, size, r)) {
      case HttpRangeResult::Partial:
        out.status = 206;
        out.first = r.first;
        out.length = r.length();
        headers += "Content-Range: bytes " + std::to_string(r.first) + "-" + std::to_string(r.last) + "/" +
                   std::to_string(size) + "\r\n";
        break;
      case HttpRangeResult::Unsatisfiable:
        out.status = 416;
        out.error = "range not satisfiable";
        out.length = 0;
        out.headers = "Content-Range: bytes */" + std::to_string(size) + "\r\n" + headers;
        return out;
      case HttpRangeResult::Whole:
        break;
    }
  }
  out.headers = std::move(headers);
  return out;
}

// The file lookup on libuv's threadpool: confined_open (server/vod/confined_open.hpp), the one
// open every VOD reader shares, resolves and opens in one step below the root, so no symlink
// swapped in meanwhile can lead the body out of it. The job keeps the connection, and so its
// responder, until it is done.
struct FileResponder::OpenJob {
  explicit OpenJob(FileResponder* r) : keep(&r->conn_), owner(r) {}

  uv_work_t req{};
  StreamSocket::Ref keep;
  FileResponder* owner;
  std::string root;
  bool follow_symlinks = true;
  std::string rel;
  int status = 0;  // 0, or the HTTP status of the failure
  std::string error;
  uv_file fd = -1;
  uint64_t size = 0;
  int64_t mtime_ns = 0;

  static void work(uv_work_t* req);
  static void after(uv_work_t* req, int status);
};

void FileResponder::OpenJob::work(uv_work_t* req) {
  auto* job = static_cast<OpenJob*>(req->data);
  auto opened = confined_open(job->root, job->rel, {.follow_symlinks = job->follow_symlinks});
  if (!opened) {
    // A path out of the root is answered like a missing file: it tells nothing about what is there.
    job->status = opened.error().code == Errc::Io && opened.error().context == kConfinedPermissionDenied ? 403 : 404;
    job->error = opened.error().context;
    return;
  }
  job->size = static_cast<uint64_t>(opened->st.st_size);
  job->mtime_ns = file_mtime_ns(opened->st);
  job->fd = opened->fd.release();
}

void FileResponder::OpenJob::after(uv_work_t* req, int) {
  std::unique_ptr<OpenJob> job(static_cast<OpenJob*>(req->data));
  HttpConnection& conn = job->owner->conn_;
  if (conn.closing()) {
    if (job->fd >= 0) close_file_async(conn, job->fd);
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
  auto* job = new OpenJob(this);
  job->req.data = job;
  job->root = app.root;
  job->follow_symlinks = app.follow_symlinks;
  job->rel = std::move(*rel);
  int rc = uv_queue_work(conn_.loop_context().loop(), &job->req, &OpenJob::work, &OpenJob::after);
  if (rc != 0) {
    delete job;
    conn_.send_error(500, "cannot queue the file lookup", false, kHttpCors);
  }
}

void FileResponder::on_opened(OpenJob& job) {
  if (job.status != 0) {
    SLUICE_LOG_INFO("conn={} proto=http peer={} event=file_refused path=\"{}\" reason=\"{}\"", conn_.id(), conn_.peer(),
                    conn_.request().path, job.error);
    return conn_.send_error(job.status, job.status == 403 ? "forbidden" : "no such file", false, kHttpCors);
  }
  fd_ = job.fd;
  HttpFileReply reply = http_file_reply(conn_.request(), job.rel, job.size, job.mtime_ns);
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
