#include "server/cluster/hiredis_uv.hpp"

#include <hiredis/async.h>

namespace sluice::server::cluster {

namespace {

// One per context, freed when its poll handle has closed (after hiredis's cleanup).
struct Watch {
  redisAsyncContext* context = nullptr;  // null once hiredis has let go of it
  uv_poll_t poll{};
  int events = 0;  // the interest hiredis asked for
};

void on_poll(uv_poll_t* handle, int status, int events) {
  auto* w = static_cast<Watch*>(handle->data);
  // On an error libuv has already stopped the poll; hiredis sees the error itself in its next read
  // or write, so it gets the events it was waiting for.
  const int ready = status < 0 ? w->events : events;
  if (w->context != nullptr && (ready & UV_READABLE) != 0) redisAsyncHandleRead(w->context);
  if (w->context != nullptr && (ready & UV_WRITABLE) != 0) redisAsyncHandleWrite(w->context);
}

void watch(Watch* w) {
  if (w->events != 0) {
    uv_poll_start(&w->poll, w->events, on_poll);
  } else {
    uv_poll_stop(&w->poll);
  }
}

void add_read(void* data) {
  auto* w = static_cast<Watch*>(data);
  w->events |= UV_READABLE;
  watch(w);
}

void del_read(void* data) {
  auto* w = static_cast<Watch*>(data);
  w->events &= ~UV_READABLE;
  watch(w);
}

void add_write(void* data) {
  auto* w = static_cast<Watch*>(data);
  w->events |= UV_WRITABLE;
  watch(w);
}

void del_write(void* data) {
  auto* w = static_cast<Watch*>(data);
  w->events &= ~UV_WRITABLE;
  watch(w);
}

// hiredis is freeing the context; the handle closes on the loop's next turn.
void cleanup(void* data) {
  auto* w = static_cast<Watch*>(data);
  w->context = nullptr;
  uv_close(reinterpret_cast<uv_handle_t*>(&w->poll), [](uv_handle_t* h) { delete static_cast<Watch*>(h->data); });
}

}  // namespace

bool attach_to_loop(redisAsyncContext* context, uv_loop_t* loop) {
  if (context->ev.data != nullptr) return false;
  auto* w = new Watch;
  if (uv_poll_init(loop, &w->poll, context->c.fd) != 0) {
    delete w;
    return false;
  }
  w->context = context;
  w->poll.data = w;
  context->ev.data = w;
  context->ev.addRead = add_read;
  context->ev.delRead = del_read;
  context->ev.addWrite = add_write;
  context->ev.delWrite = del_write;
  context->ev.cleanup = cleanup;
  return true;
}

}  // namespace sluice::server::cluster
