// HookClient: POSTs JSON to the user's hook URLs (on_publish, on_play, ...) from the event loop,
// without ever blocking it. libcurl's multi interface does the HTTP (CurlUvBridge puts it on the
// loop); this adds what the server needs on top: one reply per request delivered on a later loop
// iteration (never inside the call that asked), cancellation, a bound on the reply's size, and
// retries with backoff for notifications that must arrive (publish_done, play_done).
//
// One client per loop; every method is called on that loop's thread. A user callback may call
// post(), cancel() or close() again; it must not destroy the client.
#pragma once

#include <uv.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>

#include "server/access/curl_uv_bridge.hpp"

namespace sluice::server {

struct HookRequest {
  std::string url;                          // http:// or https:// only
  std::string body;                         // JSON text, sent as POST with Content-Type: application/json
  std::chrono::milliseconds timeout{3000};  // whole transfer, connect included
};

struct HookReply {
  bool completed = false;  // an HTTP response arrived (any status)
  long status = 0;         // HTTP status, 0 when none
  std::string body;        // response body (at most 64 KiB; larger = error "response too large")
  std::string error;       // curl's error text, "timeout", or "" when completed
  uint64_t elapsed_ms = 0;
  bool ok() const { return completed && status >= 200 && status < 300; }
};

using HookCallback = std::function<void(HookReply&&)>;

class HookClient {
 public:
  static constexpr size_t kMaxReplyBytes = 64 * 1024;
  static constexpr long kMaxConnections = 64;  // more transfers wait inside curl
  static constexpr std::chrono::milliseconds kMaxRetryDelay{30000};
  // A transfer still running this long after its timeout (queued inside curl behind the
  // connection limit) is ended by a sweep every kSweepPeriod, with error "timeout".
  static constexpr std::chrono::milliseconds kDeadlineSlack{100};
  static constexpr std::chrono::milliseconds kSweepPeriod{50};

  explicit HookClient(uv_loop_t* loop);
  ~HookClient();  // must be after close()
  HookClient(const HookClient&) = delete;
  HookClient& operator=(const HookClient&) = delete;

  // One attempt. The callback runs exactly once on the loop thread, never inside post() itself
  // (even for an invalid URL: defer it), unless cancel() or close() comes first.
  uint64_t post(HookRequest request, HookCallback done);
  void cancel(uint64_t id);  // no callback afterwards; unknown id is a no-op
  // At-least-once delivery for notifications (publish_done, play_done): retries on any failure or
  // non-2xx after retry_delay, doubling up to 30 s, for `attempts` attempts in all; `done` (may be
  // empty) is told the outcome once. Never blocks; each attempt has request.timeout.
  void post_reliably(HookRequest request, uint32_t attempts, std::chrono::milliseconds retry_delay,
                     std::function<void(bool delivered, const HookReply& last)> done = {});
  size_t in_flight() const;  // transfers running or retries waiting
  // Stops every transfer and retry and closes the uv handles (callbacks not called). Call before
  // the loop's handles are closed; after it, post() calls complete with error "closed" (from a
  // one-shot handle, so run the loop once more before uv_loop_close).
  void close();

 private:
  struct Transfer;
  struct Retry;
  struct Ready {
    uint64_t id;
    HookReply reply;
    HookCallback done;
  };

  void on_finished(CURL* easy, CURLcode result);
  void make_ready(uint64_t id, HookReply&& reply, HookCallback&& done);
  void deliver_ready();
  void start_sweep();
  void expire_overdue();
  void start_attempt(Retry& retry);
  void on_attempt_done(uint64_t retry_id, HookReply&& reply);

  uv_loop_t* loop_;
  CurlUvBridge curl_;
  uv_idle_t* deliver_ = nullptr;  // runs deliver_ready() while ready_ is not empty
  uv_timer_t* sweep_ = nullptr;   // runs expire_overdue() while transfers_ is not empty
  bool closed_ = false;
  uint64_t next_id_ = 1;
  std::unordered_map<uint64_t, std::unique_ptr<Transfer>> transfers_;  // added to curl
  std::deque<Ready> ready_;                                            // finished, not yet told
  std::unordered_map<uint64_t, std::unique_ptr<Retry>> retries_;       // post_reliably jobs
};

}  // namespace sluice::server
