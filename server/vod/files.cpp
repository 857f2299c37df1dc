#include "server/vod/files.hpp"

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

struct OpenJob {
  uv_work_t req{};
  VodFiles* self = nullptr;
  VodRoot root;
  std::string name;
  VodFiles::Callback cb;
  std::string rel;
  Result<ConfinedFile> file = Error(Errc::NotFound, "not opened");
};

struct LoadJob {
  uv_work_t req{};
  VodFiles* self = nullptr;
  std::string key;
  VodContainer container = VodContainer::Flv;
  ConfinedFile opened;
  Result<std::shared_ptr<VodFile>> result = Error(Errc::Io, "not loaded");
};

// Indexes the descriptor confined_open returned; the file is never opened by name again.
Result<std::shared_ptr<VodFile>> load_file(const std::string& key, VodContainer container, ConfinedFile opened) {
  auto file = std::make_shared<VodFile>();
  file->path = key;
  file->fd = opened.fd.release();
  file->size = static_cast<uint64_t>(opened.st.st_size);
  file->mtime_ns = file_mtime_ns(opened.st);
  file->inode = opened.st.st_ino;
  file->device = opened.st.st_dev;
  Result<media::vod::MediaIndex> index = Error(Errc::Io, "no index");
  if (container == VodContainer::Flv) {
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

bool same_file(const VodFile& file, const struct stat& st) {
  return file.device == st.st_dev && file.inode == st.st_ino && file.size == static_cast<uint64_t>(st.st_size) &&
         file.mtime_ns == file_mtime_ns(st);
}

}  // namespace

VodFile::~VodFile() {
  if (fd >= 0) ::close(fd);
}

void VodFiles::open(const VodRoot& root, const std::string& name, Callback cb) {
  auto* job = new OpenJob;
  job->self = this;
  job->root = root;
  job->name = name;
  job->cb = std::move(cb);
  job->req.data = job;
  int rc = uv_queue_work(
      loop_, &job->req,
      [](uv_work_t* req) {
        auto* j = static_cast<OpenJob*>(req->data);
        auto rel = vod_relative_path(j->name);
        if (!rel) {
          j->file = std::move(rel).error();
          return;
        }
        j->rel = std::move(*rel);
        j->file = confined_open(j->root.root, j->rel, {.follow_symlinks = j->root.follow_symlinks});
      },
      [](uv_work_t* req, int) {
        std::unique_ptr<OpenJob> j(static_cast<OpenJob*>(req->data));
        if (!j->file) {
          j->cb(std::move(j->file).error());
          return;
        }
        Opened opened{j->root.root + "/" + j->rel, vod_container_of(j->rel), std::move(*j->file)};
        j->self->on_opened(std::move(opened), std::move(j->cb));
      });
  if (rc != 0) {
    Callback failed = std::move(job->cb);
    delete job;
    failed(Error(Errc::Io, "cannot queue the file lookup"));
  }
}

void VodFiles::on_opened(Opened opened, Callback cb) {
  Entry& e = entries_[opened.key];
  // Only the file this request opened confined may be handed out: a cached entry for the same
  // name serves it only when it indexed that very file.
  if (e.file && !e.loading && same_file(*e.file, opened.file.st)) {
    cb(e.file);
    return;
  }
  e.waiters.push_back(std::move(cb));
  // The file is new or changed: (re)index it from this descriptor. Players of the old version
  // keep their old index. A load already under way was opened confined too.
  if (!e.loading) start_load(std::move(opened));
}

void VodFiles::start_load(Opened opened) {
  entries_[opened.key].loading = true;
  auto* job = new LoadJob;
  job->self = this;
  job->key = std::move(opened.key);
  job->container = opened.container;
  job->opened = std::move(opened.file);
  job->req.data = job;
  int rc = uv_queue_work(
      loop_, &job->req,
      [](uv_work_t* req) {
        auto* j = static_cast<LoadJob*>(req->data);
        j->result = load_file(j->key, j->container, std::move(j->opened));
      },
      [](uv_work_t* req, int) {
        std::unique_ptr<LoadJob> j(static_cast<LoadJob*>(req->data));
        j->self->on_loaded(j->key, std::move(j->result));
      });
  if (rc != 0) {
    std::unique_ptr<LoadJob> j(job);
    on_loaded(j->key, Error(Errc::Io, "cannot queue the indexing"));
  }
}

void VodFiles::on_loaded(const std::string& key, Result<std::shared_ptr<VodFile>> result) {
  Entry& e = entries_[key];
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
    entries_.erase(key);
  }
  evict_unused();
}

void VodFiles::evict_unused() {
  if (entries_.size() <= kMaxIdleEntries) return;
  for (auto it = entries_.begin(); it != entries_.end();) {
    bool idle =
        !it->second.loading && it->second.waiters.empty() && it->second.file && it->second.file.use_count() == 1;
    it = idle ? entries_.erase(it) : std::next(it);
  }
}

}  // namespace sluice::server
