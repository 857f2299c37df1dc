#include "server/record/record_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>

#include "config/record_template.hpp"
#include "server/io/logging.hpp"
#include "server/record/finalize.hpp"
#include "server/record/record_stats.hpp"

namespace sluice::server {

namespace {

// Each directory of rel's parent, created and entered beneath root without following a symlink,
// so nothing in the recording directory can lead a recording out of it. The parent's descriptor,
// or -1 with `error` set.
int open_parent_beneath(const std::string& root, const std::string& rel, std::string& leaf, std::string& error) {
  std::error_code ec;
  std::filesystem::create_directories(root, ec);  // the configured directory itself
  int dfd = ::open(root.c_str(), O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) {
    error = "cannot open " + root + ": " + std::strerror(errno);
    return -1;
  }
  size_t start = 0;
  for (size_t slash = rel.find('/'); slash != std::string::npos; slash = rel.find('/', start)) {
    const std::string part = rel.substr(start, slash - start);
    start = slash + 1;
    if (::mkdirat(dfd, part.c_str(), 0755) != 0 && errno != EEXIST) {
      error = "cannot create " + part + " in " + root + ": " + std::strerror(errno);
      ::close(dfd);
      return -1;
    }
    int next = ::openat(dfd, part.c_str(), O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    ::close(dfd);
    if (next < 0) {
      error = "cannot enter " + part + " (a symlink?) below " + root + ": " + std::strerror(errno);
      return -1;
    }
    dfd = next;
  }
  leaf = rel.substr(start);
  return dfd;
}

bool name_taken(int dfd, const std::string& name) {
  return ::faccessat(dfd, name.c_str(), F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

}  // namespace

int create_part_beneath(const std::string& root, const std::string& rel_stem, std::string& part_path,
                        std::string& error) {
  if (!config::is_confined_relative_path(rel_stem)) {
    error = "refused file name \"" + rel_stem + "\" (it would leave the recording directory)";
    return -1;
  }
  std::string leaf;
  const int dfd = open_parent_beneath(root, rel_stem, leaf, error);
  if (dfd < 0) return -1;
  const std::string parent = rel_stem.substr(0, rel_stem.size() - leaf.size());
  int fd = -1;
  // Never an existing name, neither a .part nor a finished file nor its MP4: -1, -2, ... until free.
  for (int n = 0; n < 1000 && fd < 0; ++n) {
    const std::string stem = leaf + (n == 0 ? "" : "-" + std::to_string(n));
    if (name_taken(dfd, stem + ".flv") || name_taken(dfd, stem + ".mp4")) continue;
    fd = ::openat(dfd, (stem + ".flv.part").c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC | O_NOFOLLOW,
                  0644);
    if (fd >= 0) {
      part_path = root + "/" + parent + stem + ".flv.part";
    } else if (errno != EEXIST) {
      error = "cannot create " + root + "/" + parent + stem + ".flv.part: " + std::strerror(errno);
      break;
    }
  }
  ::close(dfd);
  if (fd < 0 && error.empty()) error = "no free name for " + rel_stem + " in " + root;
  return fd;
}

struct RecordFile::OpenJob {
  uv_work_t req{};
  std::shared_ptr<RecordFile> file;
  std::string dir, base;
  int fd = -1;
  std::string part, error;
};

struct RecordFile::WriteReq {
  uv_fs_t req{};
  std::shared_ptr<RecordFile> file;
  std::vector<uint8_t> bytes;
};

struct RecordFile::FinalizeJob {
  uv_work_t req{};
  std::shared_ptr<RecordFile> file;
  int fd = -1;
  std::string part;
  bool mp4 = false;
  FinalizeReport report;
};

RecordFile::RecordFile(uv_loop_t* loop, std::string dir, std::string base_name, OnDone on_done, bool mp4)
    : loop_(loop),
      dir_(std::move(dir)),
      base_(std::move(base_name)),
      on_done_(std::move(on_done)),
      mp4_(mp4),
      started_unix_(static_cast<int64_t>(std::time(nullptr))) {
  ++RecordStats::get().files_open;
}

// The jobs hold the file until they are done: this runs after the last one.
RecordFile::~RecordFile() { --RecordStats::get().files_open; }

void RecordFile::open() {
  auto* job = new OpenJob;
  job->req.data = job;
  job->file = shared_from_this();
  job->dir = dir_;
  job->base = base_;
  opening_ = true;
  int rc = uv_queue_work(
      loop_, &job->req,
      [](uv_work_t* w) {
        auto* j = static_cast<OpenJob*>(w->data);
        j->fd = create_part_beneath(j->dir, j->base, j->part, j->error);
      },
      [](uv_work_t* w, int) {
        auto* j = static_cast<OpenJob*>(w->data);
        RecordFile& f = *j->file;
        f.opening_ = false;
        if (j->fd < 0) {
          f.fail(j->error);
        } else {
          f.fd_ = j->fd;
          f.part_path_ = j->part;
          f.final_path_ = j->part.substr(0, j->part.size() - 5);
          f.write_next();
        }
        delete j;
      });
  if (rc != 0) {
    delete job;
    opening_ = false;
    fail(std::string("cannot queue the open: ") + uv_strerror(rc));
  }
}

void RecordFile::append(std::vector<uint8_t>&& bytes) {
  if (failed_ || finishing_) return;
  if (pending_.empty()) {
    pending_ = std::move(bytes);
  } else {
    pending_.insert(pending_.end(), bytes.begin(), bytes.end());
  }
  write_next();
}

void RecordFile::write_next() {
  if (fd_ < 0 || in_flight_ != 0) return;
  if (pending_.empty() || failed_) {
    if (finishing_) start_finalize();
    return;
  }
  auto* w = new WriteReq;
  w->req.data = w;
  w->file = shared_from_this();
  w->bytes.swap(pending_);
  in_flight_ = w->bytes.size();
  uv_buf_t buf = uv_buf_init(reinterpret_cast<char*>(w->bytes.data()), static_cast<unsigned>(w->bytes.size()));
  int rc = uv_fs_write(loop_, &w->req, fd_, &buf, 1, -1, [](uv_fs_t* req) {
    auto* wr = static_cast<WriteReq*>(req->data);
    ssize_t result = req->result;
    size_t wanted = wr->bytes.size();
    uv_fs_req_cleanup(req);
    auto file = std::move(wr->file);
    delete wr;
    // A short write (the disk filled up mid-way) is a failure like ENOSPC.
    file->on_written(result >= 0 && static_cast<size_t>(result) < wanted ? -ENOSPC : result);
  });
  if (rc != 0) {
    in_flight_ = 0;
    delete w;
    fail(std::string("cannot queue a write: ") + uv_strerror(rc));
  }
}

void RecordFile::on_written(ssize_t result) {
  uint64_t n = in_flight_;
  in_flight_ = 0;
  if (result < 0) {
    fail(std::string("write failed: ") + uv_strerror(static_cast<int>(result)));
  } else {
    written_ += n;
    RecordStats::get().bytes_written += n;
  }
  write_next();
}

void RecordFile::fail(std::string why) {
  if (failed_) return;
  failed_ = true;
  error_ = std::move(why);
  pending_.clear();
  SLUICE_LOG_ERROR("event=record_failed file=\"{}\" error=\"{}\" written={}",
                   part_path_.empty() ? dir_ + "/" + base_ : part_path_, error_, written_);
  if (finishing_ || fd_ >= 0) start_finalize();
}

void RecordFile::finish(std::string why) {
  if (finishing_) return;
  finishing_ = true;
  end_reason_ = std::move(why);
  if (!opening_) write_next();
}

void RecordFile::start_finalize() {
  if (finalized_ || in_flight_ != 0 || opening_) return;
  if (fd_ < 0) {  // never opened: nothing to finish
    finalized_ = true;
    return;
  }
  finalized_ = true;
  auto* job = new FinalizeJob;
  job->req.data = job;
  job->file = shared_from_this();
  job->fd = std::exchange(fd_, -1);
  job->part = part_path_;
  job->mp4 = mp4_;
  int rc = uv_queue_work(
      loop_, &job->req,
      [](uv_work_t* w) {
        auto* j = static_cast<FinalizeJob*>(w->data);
        ::close(j->fd);
        j->report = finalize_recording(j->part, j->mp4);
      },
      [](uv_work_t* w, int) {
        auto* j = static_cast<FinalizeJob*>(w->data);
        const FinalizeReport& r = j->report;
        RecordFile& f = *j->file;
        (r.ok ? RecordStats::get().files_done : RecordStats::get().files_failed)++;
        if (f.on_done_) {
          Done d{r.ok,
                 r.ok ? r.final_path : j->part,
                 r.error,
                 r.final_bytes,
                 r.duration_ms,
                 f.started_unix_,
                 static_cast<int64_t>(std::time(nullptr)),
                 f.end_reason_,
                 r.mp4_ok ? r.mp4_path : std::string()};
          f.on_done_(d);
        }
        if (r.ok) {
          SLUICE_LOG_INFO("event=record_done file=\"{}\" bytes={} duration_ms={} keyframes={} reason=\"{}\"{}",
                          r.final_path, r.final_bytes, r.duration_ms, r.keyframes, j->file->end_reason_,
                          r.dropped_bytes ? " dropped_bytes=" + std::to_string(r.dropped_bytes) : std::string());
        } else {
          SLUICE_LOG_ERROR("event=record_finalize_failed file=\"{}\" error=\"{}\"", j->part, r.error);
        }
        log_mp4_copy(r);
        delete j;
      });
  if (rc != 0) {
    ::close(job->fd);
    delete job;
  }
}

}  // namespace sluice::server
