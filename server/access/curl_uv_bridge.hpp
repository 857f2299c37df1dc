// CurlUvBridge: one libcurl multi handle driven by a libuv loop, so HTTP transfers never block it.
//
// curl says which sockets it wants watched (CURLMOPT_SOCKETFUNCTION) and when it next needs a
// call (CURLMOPT_TIMERFUNCTION); the bridge keeps one uv_poll_t per such socket and one uv_timer_t,
// and answers both with curl_multi_socket_action, then collects what finished. All handles are on
// the heap and free themselves in their close callbacks, so close() may come from anywhere on the
// loop thread and the bridge may be destroyed right after it.
#pragma once

#include <curl/curl.h>
#include <uv.h>

#include <functional>
#include <unordered_set>

namespace sluice::server {

class CurlUvBridge {
 public:
  // Told of every transfer curl reports done, while the bridge reads curl's messages: it should
  // remove() the easy handle and record the outcome, never run user code (which could re-enter).
  using OnFinished = std::function<void(CURL* easy, CURLcode result)>;

  CurlUvBridge(uv_loop_t* loop, long max_connections, OnFinished on_finished);
  CurlUvBridge(const CurlUvBridge&) = delete;
  CurlUvBridge& operator=(const CurlUvBridge&) = delete;
  ~CurlUvBridge() { close(); }

  // False when curl_multi_init failed; add() then always fails.
  bool usable() const { return multi_ != nullptr; }
  // Starts a transfer; it runs once the loop does (curl asks for a zero timeout).
  CURLMcode add(CURL* easy);
  // Stops a transfer, finished or not; the caller frees the easy handle afterwards.
  void remove(CURL* easy);
  // Frees the multi handle (the caller has removed every easy handle) and closes the uv handles.
  void close();

 private:
  struct Socket;

  static int on_curl_socket(CURL* easy, curl_socket_t fd, int what, void* self, void* socket) noexcept;
  static int on_curl_timer(CURLM* multi, long timeout_ms, void* self) noexcept;
  static void on_poll(uv_poll_t* poll, int status, int events) noexcept;
  static void on_timer(uv_timer_t* timer) noexcept;

  // False when the socket cannot be polled (curl then fails that transfer).
  bool watch(curl_socket_t fd, int what, Socket* socket);
  void unwatch(Socket* socket);
  void act(curl_socket_t fd, int flags);
  void collect_finished();

  uv_loop_t* loop_;
  OnFinished on_finished_;
  CURLM* multi_ = nullptr;
  uv_timer_t* timer_ = nullptr;
  bool closing_ = false;
  std::unordered_set<Socket*> sockets_;  // watched now; closing ones are no longer in here
};

}  // namespace sluice::server
