#include "server/record/mp4_copy.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "media/record/mp4_layout.hpp"
#include "media/vod/flv_indexer.hpp"
#include "server/io/file_io.hpp"

namespace sluice::server {

namespace {

constexpr size_t kWindow = 1 << 20;

// Reads of a file that mostly move forward, served from one window of at least kWindow bytes.
class WindowReader {
 public:
  WindowReader(int fd, uint64_t file_size) : fd_(fd), size_(file_size) {}

  // [offset, offset + n) of the file, or an empty span when it cannot be read.
  std::span<const uint8_t> get(uint64_t offset, uint64_t n) {
    if (offset + n > size_) return {};
    if (offset < start_ || offset + n > start_ + buf_.size()) {
      const uint64_t want = std::min<uint64_t>(std::max<uint64_t>(n, kWindow), size_ - offset);
      buf_.resize(static_cast<size_t>(want));
      size_t got = 0;
      while (got < buf_.size()) {
        ssize_t r = ::pread(fd_, buf_.data() + got, buf_.size() - got, static_cast<off_t>(offset + got));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
          buf_.clear();
          return {};
        }
        got += static_cast<size_t>(r);
      }
      start_ = offset;
    }
    return std::span<const uint8_t>(buf_.data() + (offset - start_), static_cast<size_t>(n));
  }

 private:
  int fd_;
  uint64_t size_;
  uint64_t start_ = 0;
  std::vector<uint8_t> buf_;
};

bool write_span(int fd, std::span<const uint8_t> data) { return write_all(fd, data.data(), data.size()); }

std::string errno_text(const std::string& what) { return what + ": " + std::strerror(errno); }

}  // namespace

Mp4CopyReport write_mp4_copy(const std::string& flv_path, const std::string& mp4_path) {
  Mp4CopyReport r;
  r.path = mp4_path;
  Fd in(::open(flv_path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  struct stat st {};
  if (in.get() < 0 || ::fstat(in.get(), &st) != 0) {
    r.error = errno_text("open " + flv_path);
    return r;
  }
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  WindowReader reader(in.get(), size);

  media::vod::FlvIndexer indexer(size);
  while (!indexer.done()) {
    const media::vod::ByteRange req = indexer.next_request();
    const uint64_t n = std::min<uint64_t>(std::max<uint64_t>(req.size, kWindow), size - req.offset);
    std::span<const uint8_t> bytes = reader.get(req.offset, n);
    if (bytes.empty() && n > 0) {
      r.error = "cannot read " + flv_path;
      return r;
    }
    if (auto fed = indexer.feed(req.offset, bytes); !fed) {
      r.error = "index: " + fed.error().message();
      return r;
    }
  }
  auto index = indexer.finish();
  if (!index) {
    r.error = "index: " + index.error().message();
    return r;
  }
  media::record::Mp4Builder builder(*index);
  for (const media::vod::Sample& s : index->samples) {
    const uint32_t want = media::record::Mp4Builder::head_bytes(s);
    std::span<const uint8_t> head = want ? reader.get(s.file_offset, want) : std::span<const uint8_t>();
    if (want && head.empty()) {
      r.error = "cannot read " + flv_path;
      return r;
    }
    if (auto added = builder.add(s, head); !added) {
      r.error = "mp4: " + added.error().message();
      return r;
    }
  }
  auto layout = builder.finish();
  if (!layout) {
    r.error = "mp4: " + layout.error().message();
    return r;
  }
  r.notes = layout->notes;
  r.video_samples = layout->video_samples;
  r.audio_samples = layout->audio_samples;

  if (::access(mp4_path.c_str(), F_OK) == 0) {
    r.error = mp4_path + " exists already";
    return r;
  }
  const std::string tmp = mp4_path + ".tmp";
  ::unlink(tmp.c_str());  // a copy a crash interrupted
  Fd out(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644));
  if (out.get() < 0) {
    r.error = errno_text("create " + tmp);
    return r;
  }
  bool ok = write_span(out.get(), layout->head);
  for (const media::vod::ByteRange& range : layout->copy) {
    if (!ok) break;
    std::span<const uint8_t> bytes = reader.get(range.offset, range.size);
    ok = (!bytes.empty() || range.size == 0) && write_span(out.get(), bytes);
  }
  if (ok && ::fsync(out.get()) != 0) ok = false;
  if (!ok || ::rename(tmp.c_str(), mp4_path.c_str()) != 0) {
    r.error = errno_text("write " + tmp);
    ::unlink(tmp.c_str());
    return r;
  }
  r.bytes = layout->final_size;
  r.ok = true;
  return r;
}

}  // namespace sluice::server
