// HttpResponder: one answer to one request, driven by the HttpConnection that received it. The
// router (server/http/routes.cpp) picks the kind once a request is ready (an upload's head, the
// whole request otherwise) and starts it:
//   SimpleResponder (simple_responder.hpp)  errors from routing, CORS preflight, 405, the page
//   ApiResponder    (api_responder.hpp)     the stats API and metrics, through HttpApi
//   FlvResponder    (flv_responder.hpp)     HTTP-FLV of a live stream
//   SnapshotResponder (snapshot_responder.hpp)  a live stream's latest keyframe as a JPEG
//   FileResponder   (file_responder.hpp)    a file download (Range, preconditions, sendfile)
//   UploadResponder (upload_responder.hpp)  a PUT streamed to a temporary file, then renamed
//
// The connection owns the responder of the request it answers, and everything a response holds
// (a live subscription, an open file, an upload's temporary file) is the responder's. The
// responder ends its answer with HttpConnection::finish_response() (send_simple() and
// send_error() do it too); the connection then keeps the object, inert, until the next request
// is dispatched or the connection is deleted, so a responder may finish from inside any of its
// own calls. Work it starts that outlives a call either holds a StreamSocket::Ref to the
// connection (threadpool jobs: the responder outlives them) or is handed to its own cleanup when
// the answer ends (an upload's file operations). close() tells it the connection is closing.
//
// fill() is the one call per batch (one virtual call, whatever the batch carries); on_written()
// runs when a flush finds nothing to write; the rest once per request or per event.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace sluice::server {

class HttpFlvPlayer;
class WriteBatch;

class HttpResponder {
 public:
  virtual ~HttpResponder() = default;

  // What the connection does now, for the stats API: "request", "http-flv", "download", "upload".
  virtual const char* activity() const = 0;
  // A request players repeat several times a second (HLS playlists, parts): its line in the log
  // is at debug level when it succeeds, or 1000 LL-HLS viewers would write 5000 lines a second.
  virtual bool routine() const { return false; }

  // Output. fill() appends body bytes after the heads the connection queued, at most max_bytes;
  // true when more remains. on_written(): everything queued so far is written (the head of a
  // file, so its body may start).
  virtual bool fill(WriteBatch& batch, size_t max_bytes) {
    (void)batch;
    (void)max_bytes;
    return false;
  }
  virtual void on_written() {}

  // The request body, for an answer that takes it (an upload): whether the parser should feed it
  // now, whether enough of it waits that reading should pause, its pieces (0, or the status the
  // request fails with: 413), its end, and its failure (a parse error: answer `status`).
  virtual bool takes_body() const { return false; }
  virtual bool body_backlogged() const { return false; }
  virtual int on_body(const char* at, size_t len) {
    (void)at;
    (void)len;
    return 0;
  }
  virtual void on_body_end() {}
  virtual void on_body_failed(int status, std::string_view why) {
    (void)status;
    (void)why;
  }

  // Once a second while nothing is being written: the responder's own limits.
  virtual void on_tick(uint64_t now_ms) { (void)now_ms; }
  // The server stops: end the answer soon where that is possible (a live stream).
  virtual void stop() {}
  // The connection closes: let go of what the answer holds; the connection's output is gone.
  virtual void close() {}

  // The HTTP-FLV reader while a live stream is being sent, for the stats API.
  virtual const HttpFlvPlayer* flv() const { return nullptr; }
};

}  // namespace sluice::server
