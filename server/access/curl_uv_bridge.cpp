#include "server/access/curl_uv_bridge.hpp"

#include <exception>
#include <mutex>

#include "server/io/logging.hpp"
#include "server/io/uv_handle.hpp"

namespace sluice::server {

// A socket curl asked us to watch. It is freed in its close callback, never before, because
// libuv still holds the uv_poll_t until then.
struct CurlUvBridge::Socket {
  uv_poll_t poll{};
  CurlUvBridge* bridge = nullptr;
  curl_socket_t fd = CURL_SOCKET_BAD;
};

namespace {

void init_curl_once() {
  // Not thread-safe in libcurl itself, and costly: once per process, before any handle exists.
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

}  // namespace

CurlUvBridge::CurlUvBridge(uv_loop_t* loop, long max_connections, OnFinished on_finished)
    : loop_(loop), on_finished_(std::move(on_finished)) {
  init_curl_once();
  timer_ = new uv_timer_t{};
  uv_timer_init(loop_, timer_);
  timer_->data = this;
  multi_ = curl_multi_init();
  if (multi_ == nullptr) {
    SLUICE_LOG_ERROR("event=curl_multi_init_failed");
    return;
  }
  curl_multi_setopt(multi_, CURLMOPT_SOCKETFUNCTION, &CurlUvBridge::on_curl_socket);
  curl_multi_setopt(multi_, CURLMOPT_SOCKETDATA, this);
  curl_multi_setopt(multi_, CURLMOPT_TIMERFUNCTION, &CurlUvBridge::on_curl_timer);
  curl_multi_setopt(multi_, CURLMOPT_TIMERDATA, this);
  // Past this many connections further transfers wait inside curl instead of opening more.
  curl_multi_setopt(multi_, CURLMOPT_MAX_TOTAL_CONNECTIONS, max_connections);
}

CURLMcode CurlUvBridge::add(CURL* easy) {
  if (multi_ == nullptr) return CURLM_BAD_HANDLE;
  return curl_multi_add_handle(multi_, easy);
}

void CurlUvBridge::remove(CURL* easy) {
  if (multi_ != nullptr) curl_multi_remove_handle(multi_, easy);
}

void CurlUvBridge::close() {
  if (multi_ != nullptr) {
    // Cleanup may still call on_curl_socket (REMOVE for cached connections): keep multi_ valid
    // for it, but let it watch nothing new.
    closing_ = true;
    curl_multi_cleanup(multi_);
    multi_ = nullptr;
  }
  for (Socket* socket : sockets_) {
    uv_poll_stop(&socket->poll);
    close_handle(&socket->poll, [](uv_handle_t* h) { delete static_cast<Socket*>(h->data); });
  }
  sockets_.clear();
  if (timer_ != nullptr) {
    close_and_delete(timer_);
    timer_ = nullptr;
  }
}

int CurlUvBridge::on_curl_socket(CURL*, curl_socket_t fd, int what, void* self, void* socket) noexcept {
  auto* bridge = static_cast<CurlUvBridge*>(self);
  try {
    if (what == CURL_POLL_REMOVE) {
      bridge->unwatch(static_cast<Socket*>(socket));
      return 0;
    }
    return bridge->watch(fd, what, static_cast<Socket*>(socket)) ? 0 : -1;
  } catch (const std::exception& e) {
    SLUICE_LOG_WARN("event=curl_socket_failed fd={} error=\"{}\"", fd, e.what());
  } catch (...) {
    SLUICE_LOG_WARN("event=curl_socket_failed fd={}", fd);
  }
  return -1;
}

int CurlUvBridge::on_curl_timer(CURLM*, long timeout_ms, void* self) noexcept {
  auto* bridge = static_cast<CurlUvBridge*>(self);
  if (bridge->timer_ == nullptr) return 0;
  // curl must not be re-entered from here: a zero timeout fires on the next loop iteration.
  if (timeout_ms < 0) {
    uv_timer_stop(bridge->timer_);
  } else {
    uv_timer_start(bridge->timer_, &CurlUvBridge::on_timer, static_cast<uint64_t>(timeout_ms), 0);
  }
  return 0;
}

bool CurlUvBridge::watch(curl_socket_t fd, int what, Socket* socket) {
  if (closing_) return true;
  if (socket == nullptr) {
    socket = new Socket{};
    socket->bridge = this;
    socket->fd = fd;
    int err = uv_poll_init_socket(loop_, &socket->poll, fd);
    if (err == UV_EEXIST) {
      // curl closed a socket without a REMOVE and the number came back: the old watch is stale.
      for (Socket* stale : sockets_) {
        if (stale->fd == fd) {
          unwatch(stale);
          break;
        }
      }
      err = uv_poll_init_socket(loop_, &socket->poll, fd);
    }
    if (err != 0) {
      // The handle was not registered with the loop, so it can go at once.
      delete socket;
      SLUICE_LOG_WARN("event=curl_poll_init_failed fd={} error=\"{}\"", fd, uv_strerror(err));
      return false;
    }
    socket->poll.data = socket;
    sockets_.insert(socket);
    curl_multi_assign(multi_, fd, socket);
  }
  int events = 0;
  if (what & CURL_POLL_IN) events |= UV_READABLE;
  if (what & CURL_POLL_OUT) events |= UV_WRITABLE;
  if (events == 0) {
    uv_poll_stop(&socket->poll);
  } else {
    uv_poll_start(&socket->poll, events, &CurlUvBridge::on_poll);
  }
  return true;
}

void CurlUvBridge::unwatch(Socket* socket) {
  if (socket == nullptr || sockets_.erase(socket) == 0) return;
  uv_poll_stop(&socket->poll);
  close_handle(&socket->poll, [](uv_handle_t* h) { delete static_cast<Socket*>(h->data); });
}

void CurlUvBridge::on_poll(uv_poll_t* poll, int status, int events) noexcept {
  auto* socket = static_cast<Socket*>(poll->data);
  int flags = 0;
  if (status < 0) {
    flags = CURL_CSELECT_ERR;
  } else {
    if (events & UV_READABLE) flags |= CURL_CSELECT_IN;
    if (events & UV_WRITABLE) flags |= CURL_CSELECT_OUT;
  }
  // socket may be closed (not freed) by the action; only the copies are used after it.
  socket->bridge->act(socket->fd, flags);
}

void CurlUvBridge::on_timer(uv_timer_t* timer) noexcept {
  static_cast<CurlUvBridge*>(timer->data)->act(CURL_SOCKET_TIMEOUT, 0);
}

void CurlUvBridge::act(curl_socket_t fd, int flags) {
  if (multi_ == nullptr) return;
  try {
    int running = 0;
    curl_multi_socket_action(multi_, fd, flags, &running);
    collect_finished();
  } catch (const std::exception& e) {
    SLUICE_LOG_WARN("event=curl_action_failed error=\"{}\"", e.what());
  } catch (...) {
    SLUICE_LOG_WARN("event=curl_action_failed");
  }
}

void CurlUvBridge::collect_finished() {
  int left = 0;
  while (multi_ != nullptr) {
    CURLMsg* msg = curl_multi_info_read(multi_, &left);
    if (msg == nullptr) break;
    if (msg->msg != CURLMSG_DONE) continue;
    // msg dies with the removal on_finished_ makes: copy what it says first.
    CURL* easy = msg->easy_handle;
    CURLcode result = msg->data.result;
    on_finished_(easy, result);
  }
}

}  // namespace sluice::server
