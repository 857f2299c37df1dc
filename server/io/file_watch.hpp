// FileWatch: calls back once a file has changed and then stayed quiet for a moment. It watches the
// file's directory (uv_fs_event), not the file: editors and configuration tools replace a file by
// writing another and renaming it over, which a watch on the old inode would not see again. The
// quiet period folds the several events of one save (truncate, writes, rename) into one call.
#pragma once

#include <uv.h>

#include <cstdint>
#include <functional>
#include <string>

#include "base/result.hpp"

namespace sluice::server {

class FileWatch {
 public:
  FileWatch(uv_loop_t* loop, std::string path, uint64_t quiet_ms, std::function<void()> changed);
  ~FileWatch();
  FileWatch(const FileWatch&) = delete;
  FileWatch& operator=(const FileWatch&) = delete;

  Result<void> start();
  void close();

 private:
  static void on_event(uv_fs_event_t* handle, const char* filename, int events, int status);

  uv_loop_t* loop_;
  std::string path_;
  std::string name_;  // the file's name in its directory
  uint64_t quiet_ms_;
  std::function<void()> changed_;
  uv_fs_event_t event_{};
  uv_timer_t quiet_{};
  bool started_ = false;
};

}  // namespace sluice::server
