#include "server/io/file_watch.hpp"

#include <filesystem>

#include "server/io/uv_handle.hpp"

namespace sluice::server {

FileWatch::FileWatch(uv_loop_t* loop, std::string path, uint64_t quiet_ms, std::function<void()> changed)
    : loop_(loop), path_(std::move(path)), quiet_ms_(quiet_ms), changed_(std::move(changed)) {}

FileWatch::~FileWatch() = default;

Result<void> FileWatch::start() {
  const std::filesystem::path file = std::filesystem::absolute(path_);
  name_ = file.filename().string();
  const std::string dir = file.parent_path().string();
  uv_fs_event_init(loop_, &event_);
  event_.data = this;
  uv_timer_init(loop_, &quiet_);
  quiet_.data = this;
  started_ = true;
  if (int rc = uv_fs_event_start(&event_, &FileWatch::on_event, dir.c_str(), 0); rc != 0) {
    return Error(Errc::Io, "cannot watch " + dir + ": " + uv_strerror(rc));
  }
  return ok();
}

void FileWatch::on_event(uv_fs_event_t* handle, const char* filename, int, int status) {
  auto* self = static_cast<FileWatch*>(handle->data);
  // Another file of the directory; no name (some file systems) may be ours.
  if (status != 0 || (filename != nullptr && self->name_ != filename)) return;
  uv_timer_start(
      &self->quiet_, [](uv_timer_t* t) { static_cast<FileWatch*>(t->data)->changed_(); }, self->quiet_ms_, 0);
}

void FileWatch::close() {
  if (!started_) return;
  started_ = false;
  uv_fs_event_stop(&event_);
  close_handle(&event_);
  close_handle(&quiet_);
}

}  // namespace sluice::server
