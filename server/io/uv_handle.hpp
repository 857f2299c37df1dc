// Typed views of libuv handles. libuv's handle types share a common prefix (uv_handle_t, then
// uv_stream_t for TCP), so code casts between them all the time; these helpers make the one
// legal cast in one place and close a handle only once.
#pragma once

#include <uv.h>

#include <type_traits>

namespace sluice::server {

template <typename H>
uv_handle_t* as_handle(H* h) {
  static_assert(!std::is_same_v<H, uv_handle_t>, "already a uv_handle_t");
  return reinterpret_cast<uv_handle_t*>(h);
}
template <typename H>
const uv_handle_t* as_handle(const H* h) {
  return reinterpret_cast<const uv_handle_t*>(h);
}

// uv_tcp_t (and uv_pipe_t) begin with uv_stream_t.
inline uv_stream_t* as_stream(uv_tcp_t* tcp) { return reinterpret_cast<uv_stream_t*>(tcp); }
inline const uv_stream_t* as_stream(const uv_tcp_t* tcp) { return reinterpret_cast<const uv_stream_t*>(tcp); }

// Closes h unless it is closing already; cb (may be nullptr) runs on the loop when it has closed.
template <typename H>
void close_handle(H* h, uv_close_cb cb = nullptr) {
  if (!uv_is_closing(as_handle(h))) uv_close(as_handle(h), cb);
}

// Closes a handle allocated with new and deletes it once libuv is done with it.
template <typename H>
void close_and_delete(H* h) {
  close_handle(h, [](uv_handle_t* closed) { delete reinterpret_cast<H*>(closed); });
}

// The data pointer of any handle or request, as the type stored there.
template <typename T, typename H>
T* owner_of(const H* h) {
  return static_cast<T*>(h->data);
}

}  // namespace sluice::server
