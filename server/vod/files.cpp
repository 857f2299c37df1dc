#include "server/vod/files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "media/vod/flv_indexer.hpp"
#include "media/vod/mp4_demuxer.hpp"

namespace sluice::server {

namespace {


// Files whose index nobody uses are forgotten once the cache holds more than this many.
constexpr size_t kMaxIdleEntries = 64;
// Indexing reads FLV files in pieces of this size (an MP4's moov is read whole, as it asks).
constexpr uint64_t kIndexReadSize = 1 << 20;

// Reads [offset, offset+size) fully (pread: safe to share the descriptor).
bool read_range(int fd, uint64_t offset, uint64_t size, std::vector<uint8_t>& out) {
  out.resize(size);
  uint64_t done = 0;
  while (done < size) {
    ssize_t n = ::pread(fd, out.data() + done, size - done, static_cast<off_t>(offset + done));
    if (n <= 0) break;
    done += static_cast<uint64_t>(n);
  }
  out.resize(done);
  return done == size;
}

// Drives an indexer (FlvIndexer or Mp4Demuxer) with blocking reads. Runs on a threadpool thread.
template <typename Indexer>
Result<media::vod::MediaIndex> build_index(Indexer& indexer, int fd, uint64_t file_size, bool chunked) {
  std::vector<uint8_t> buf;
  while (!indexer.done()) {
    media::vod::ByteRange want = indexer.next_request();
    if (want.size == 0) break;
    uint64_t size = want.size;
    if (chunked && size < kIndexReadSize) size = std::min<uint64_t>(kIndexReadSize, file_size - want.offset);
    if (!read_range(fd, want.offset, size, buf) && buf.size() < want.size)
      return Error(Errc::Io, "short read at byte " + std::to_string(want.offset));
    auto fed = indexer.feed(want.offset, buf);
    if (!fed) return std::move(fed).error();
  }
  return indexer.finish();
}

struct ResolveJob {
  uv_work_t req{};
  VodFiles* self = nullptr;
  std::string root, name;
  VodFiles::Callback cb;
  Result<VodPath> path = Error(Errc::NotFound, "not resolved");
  uint64_t size = 0, inode = 0;
  int64_t mtime = 0;
};

struct LoadJob {
  uv_work_t req{};
  VodFiles* self = nullptr;
  VodPath path;
  Result<std::shared_ptr<VodFile>> result = Error(Errc::Io, "not loaded");
};

Result<std::shared_ptr<VodFile>> load_file(const VodPath& path) {
  auto file = std::make_shared<VodFile>();
  file->path = path.path;
  file->fd = ::open(path.path.c_str(), O_RDONLY | O_CLOEXEC);
  if (file->fd < 0) return Error(Errc::NotFound, "cannot open " + path.path);
  struct stat st {};
  if (::fstat(file->fd, &st) != 0) return Error(Errc::Io, "cannot stat " + path.path);
  file->size = static_cast<uint64_t>(st.st_size);
  file->mtime_ns = file_mtime_ns(st);
  file->inode = st.st_ino;
  Result<media::vod::MediaIndex> index = Error(Errc::Io, "no index");
  if (path.container == VodContainer::Flv) {
    media::vod::FlvIndexer indexer(file->size);
    index = build_index(indexer, file->fd, file->size, true);
  } else {
    media::vod::Mp4Demuxer demuxer(file->size);
    index = build_index(demuxer, file->fd, file->size, false);
  }
  if (!index) return std::move(index).error();
  file->index = std::move(*index);
  return file;
}

}  // namespace

VodFile::~VodFile() {
  if (fd >= 0) ::close(fd);
}

void VodFiles::open(const std::string& root, const std::string& name, Callback cb) {
  auto* job = new ResolveJob;
  job->self = this;
  job->root = root;
  job->name = name;
  job->cb = std::move(cb);
  job->req.data = job;
  uv_queue_work(
      loop_, &job->req,
      [](uv_work_t* req) {
        auto* j = static_cast<ResolveJob*>(req->data);
        j->path = resolve_vod_path(j->root, j->name);
        struct stat st {};
        if (j->path && ::stat(j->path->path.c_str(), &st) == 0) {
          j->size = static_cast<uint64_t>(st.st_size);
          j->mtime = file_mtime_ns(st);
          j->inode = st.st_ino;
        }
      },
      [](uv_work_t* req, int) {
        std::unique_ptr<ResolveJob> j(static_cast<ResolveJob*>(req->data));
        if (!j->path) {
          j->cb(std::move(j->path).error());
          return;
        }
        j->self->on_resolved(*j->path, Identity{j->size, j->mtime, j->inode}, std::move(j->cb));
      });
}

void VodFiles::on_resolved(const VodPath& path, const Identity& id, Callback cb) {
  Entry& e = entries_[path.path];
  if (e.file && !e.loading && e.file->size == id.size && e.file->mtime_ns == id.mtime_ns && e.file->inode == id.inode) {
    cb(e.file);
    return;
  }
  e.waiters.push_back(std::move(cb));
  // The file is new or changed: (re)index it. Players of the old version keep their old index.
  if (!e.loading) start_load(path);
}

void VodFiles::start_load(const VodPath& path) {
  entries_[path.path].loading = true;
  auto* job = new LoadJob;
  job->self = this;
  job->path = path;
  job->req.data = job;
  uv_queue_work(
      loop_, &job->req,
      [](uv_work_t* req) {
        auto* j = static_cast<LoadJob*>(req->data);
        j->result = load_file(j->path);
      },
      [](uv_work_t* req, int) {
        std::unique_ptr<LoadJob> j(static_cast<LoadJob*>(req->data));
        j->self->on_loaded(j->path.path, std::move(j->result));
      });
}

void VodFiles::on_loaded(const std::string& path, Result<std::shared_ptr<VodFile>> result) {
  Entry& e = entries_[path];
  e.loading = false;
  std::vector<Callback> waiters;
  waiters.swap(e.waiters);
  if (result) {
    e.file = std::move(*result);
    for (auto& cb : waiters) cb(e.file);
  } else {
    e.file.reset();
    Error err = std::move(result).error();
    for (auto& cb : waiters) cb(err);
    entries_.erase(path);
  }
  evict_unused();
}

void VodFiles::evict_unused() {
  if (entries_.size() <= kMaxIdleEntries) return;
  for (auto it = entries_.begin(); it != entries_.end();) {
    bool idle = !it->second.loading && it->second.waiters.empty() && it->second.file && it->second.file.use_count() == 1;
    it = idle ? entries_.erase(it) : std::next(it);
  }
}

}  // namespace sluice::server
