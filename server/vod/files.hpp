// VodFiles: the shared, parsed index of every VOD file being played.
//
// A file is resolved (vod_path.hpp), opened and indexed on libuv's threadpool, never on the loop;
// its index is built once and shared by all its players, and rebuilt when the file changes (size,
// modification time or inode differ at the next play). Players read sample bytes with uv_fs_read
// on the shared descriptor (pread semantics, so they never disturb each other).
#pragma once

#include <uv.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "media/vod/media_index.hpp"
#include "base/result.hpp"
#include "server/vod/path.hpp"

namespace sluice::server {

struct VodFile {
  std::string path;
  int fd = -1;
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  uint64_t inode = 0;
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

  // Resolves `name` under `root` and calls back on the loop with the file's shared index.
  // Errc::NotFound for names outside the root or missing files; parse errors as the demuxer says.
  void open(const std::string& root, const std::string& name, Callback cb);

  size_t cached_files() const { return entries_.size(); }

 private:
  struct Entry {
    VodFilePtr file;
    bool loading = false;
    std::vector<Callback> waiters;
  };
  struct Identity {
    uint64_t size = 0;
    int64_t mtime_ns = 0;
    uint64_t inode = 0;
  };
  void on_resolved(const VodPath& path, const Identity& id, Callback cb);
  void start_load(const VodPath& path);
  void on_loaded(const std::string& path, Result<std::shared_ptr<VodFile>> result);
  void evict_unused();

  uv_loop_t* loop_;
  std::unordered_map<std::string, Entry> entries_;
};

}  // namespace sluice::server
