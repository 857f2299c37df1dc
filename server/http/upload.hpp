// HttpUpload: the state of one streamed upload (PUT /{vod-app}/{path}) on an HTTP connection.
//
// The body goes to a hidden temporary file next to the target (".{name}.upload-{conn}-{random}",
// never served: hidden names are refused by downloads), written with uv_fs_write on libuv's
// threadpool while the next piece is received. Only when the whole body is in is the file fsync'ed,
// closed and renamed over the target, so a failed, refused or aborted upload leaves nothing
// half-written and never replaces a good file. The connection drives the steps
// (http_upload.cpp); at most one file operation is in flight.
#pragma once

#include <uv.h>

#include <cstdint>
#include <string>
#include <vector>

namespace sluice::server {

struct HttpUpload {
  enum class Stage { Idle, Write, Fsync, Close, Rename, Unlink };

  uv_fs_t req{};
  Stage stage = Stage::Idle;
  uv_file fd = -1;
  std::string final_path;
  std::string temp_path;
  std::string location;    // the request path, for the Location header and logs
  bool claimed = false;    // holds the service's claim on final_path
  bool replaced = false;   // the target existed
  bool receiving = false;  // the parser feeds the body
  bool body_done = false;  // the whole body has been received
  bool aborted = false;    // cleanup (close, unlink) in progress or done
  bool temp_removed = false;
  int abort_status = 0;  // answer once aborted (0: none, the connection is closing)
  std::string abort_message;
  uint64_t received = 0;
  uint64_t written = 0;
  uint64_t started_ms = 0;
  // Body bytes being received, and those being written (swapped when a write completes).
  std::vector<char> filling;
  std::vector<char> inflight;
  size_t inflight_done = 0;
};

}  // namespace sluice::server
