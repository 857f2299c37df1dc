#include "server/http/file_lookup.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "server/vod/confined_open.hpp"
#include "server/vod/path.hpp"

namespace sluice::server {

namespace {

int64_t ctime_ns(const struct stat& st) { return int64_t(st.st_ctim.tv_sec) * 1'000'000'000 + st.st_ctim.tv_nsec; }

}  // namespace

FileLookup lookup_file(const std::string& root, std::string_view rel, bool follow_symlinks, size_t max_body,
                       const std::optional<FileIdentity>& known) {
  FileLookup out;
  auto opened = confined_open(root, rel, {.follow_symlinks = follow_symlinks});
  if (!opened) {
    // A path out of the root is answered like a missing file: it tells nothing about what is there.
    out.status = opened.error().code == Errc::Io && opened.error().context == kConfinedPermissionDenied ? 403 : 404;
    out.error = opened.error().context;
    return out;
  }
  const struct stat& st = opened->st;
  out.id = {st.st_dev, st.st_ino, static_cast<uint64_t>(st.st_size), file_mtime_ns(st), ctime_ns(st)};
  if (out.id.size > max_body) {
    out.fd = opened->fd.release();
    out.meta = std::make_shared<const HttpFileMeta>(http_file_meta(rel, out.id.size, out.id.mtime_ns));
    return out;
  }
  if (known && *known == out.id) {
    out.unchanged = true;
    return out;  // the descriptor closes here
  }
  std::vector<uint8_t> bytes(out.id.size);
  size_t got = 0;
  while (got < bytes.size()) {
    ssize_t n = ::pread(opened->fd.get(), bytes.data() + got, bytes.size() - got, static_cast<off_t>(got));
    if (n > 0) {
      got += static_cast<size_t>(n);
    } else if (n == 0) {
      break;  // truncated since the fstat
    } else if (errno != EINTR) {
      // An I/O error: the sendfile path meets it again and ends the answer the way it does.
      out.fd = opened->fd.release();
      out.meta = std::make_shared<const HttpFileMeta>(http_file_meta(rel, out.id.size, out.id.mtime_ns));
      return out;
    }
  }
  if (got != bytes.size()) {
    bytes.resize(got);
    out.whole = false;
  }
  out.body = Slice::adopt(std::move(bytes));
  out.meta = std::make_shared<const HttpFileMeta>(http_file_meta(rel, got, out.id.mtime_ns));
  return out;
}

}  // namespace sluice::server
