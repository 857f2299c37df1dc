// lookup_file: the blocking part of a download, run on libuv's threadpool (FileResponder,
// file_responder.hpp). Opens the file confined to its root (server/vod/confined_open.hpp, the one
// open every VOD reader shares: resolved and opened in one step below the root, so no symlink
// swapped in meanwhile can lead out of it) and fstats it. Then:
//  - a small file (at most max_body bytes) is read whole and closed here, so the loop answers it
//    from memory in one write and caches it (small_file_cache.hpp): one pool round trip instead
//    of three (open, sendfile, close). When it is still the version the cache holds (`known`),
//    nothing is read.
//  - a larger file stays open for sendfile (sendfile.hpp).
// Either way the file's head lines (HttpFileMeta: type, ETag, Last-Modified) are formatted here.
// Blocking: never call it on the loop. Unit-tested in tests/unit/server/http/file_lookup_test.cpp.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/bytes.hpp"
#include "server/http/file_reply.hpp"
#include "server/http/small_file_cache.hpp"

namespace sluice::server {

struct FileLookup {
  int status = 0;     // 0, or the HTTP status of the failure (403, 404)
  std::string error;  // why, for the log
  FileIdentity id;
  bool unchanged = false;  // the file is still `known`: nothing was read
  Slice body;              // a small file, read whole (id.size bytes)
  bool whole = true;       // false: the file changed size while it was read (body is what was read)
  int fd = -1;             // a larger file, open: the caller owns and closes it
  // Its head lines (file_reply.hpp), formatted here rather than on the loop; none when unchanged.
  std::shared_ptr<const HttpFileMeta> meta;
};

FileLookup lookup_file(const std::string& root, std::string_view rel, bool follow_symlinks, size_t max_body,
                       const std::optional<FileIdentity>& known);

}  // namespace sluice::server
