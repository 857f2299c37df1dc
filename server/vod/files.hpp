// VodFiles: the shared, parsed index of every VOD file being played.
//
// A name is turned into a path below the root (path.hpp) and opened confined to the root
// (confined_open.hpp) on libuv's threadpool, never on the loop; its index is built from that very
// descriptor once and shared by all its players, and rebuilt when the file changes (device,
// inode, size or modification time differ at the next play). The cache is keyed by the name's
// path below the root, but an entry is only handed out when the file just opened confined is the
// one it indexed, so a later swap of a folder for a symlink never serves what the entry holds for
// a file that is no longer there. Players read sample bytes with pread on the shared descriptor
// (so they never disturb each other), never by name.
#pragma once

#include <sys/types.h>
#include <uv.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/result.hpp"
#include "media/vod/media_index.hpp"
#include "server/vod/confined_open.hpp"
#include "server/vod/path.hpp"

namespace sluice::server {

// Where a VOD app's files are, and how they may be reached (apps.<vod> in docs/configuration.md).
struct VodRoot {
  std::string root;
  bool follow_symlinks = true;
};

struct VodFile {
  std::string path;  // root/rel as named, for logs (the descriptor is the truth)
  int fd = -1;
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  uint64_t inode = 0;
  uint64_t device = 0;
  media::vod::MediaIndex index;

  VodFile() = default;
  VodFile(const VodFile&) = delete;
  VodFile& operator=(const VodFile&) = delete;
  ~VodFile();
};
using VodFilePtr = std::shared_ptr<const VodFile>;

class VodFiles {
 public:
  using Callback = std::function<void(Result<VodFilePtr>)>;

  explicit VodFiles(uv_loop_t* loop) : loop_(loop) {}
  VodFiles(const VodFiles&) = delete;
  VodFiles& operator=(const VodFiles&) = delete;

  // Opens `name` confined to `root` and calls back on the loop with the file's shared index.
  // Errc::NotFound for invalid names and missing files, Errc::Rejected for paths that lead out of
  // the root; parse errors as the demuxer says.
  void open(const VodRoot& root, const std::string& name, Callback cb);

  size_t cached_files() const { return entries_.size(); }

 private:
  struct Entry {
    VodFilePtr file;
    bool loading = false;
    std::vector<Callback> waiters;
  };
  // The file just opened for one request.
  struct Opened {
    std::string key;  // root/rel
    VodContainer container = VodContainer::Flv;
    ConfinedFile file;
  };
  void on_opened(Opened opened, Callback cb);
  void start_load(Opened opened);
  void on_loaded(const std::string& key, Result<std::shared_ptr<VodFile>> result);
  void evict_unused();

  uv_loop_t* loop_;
  std::unordered_map<std::string, Entry> entries_;
};

}  // namespace sluice::server
