// Runs a hiredis asynchronous context on a libuv loop: hiredis asks for read and write interest,
// a uv_poll_t on its socket answers with redisAsyncHandleRead/Write.
//
// Ours rather than hiredis 0.14's adapters/libuv.h, which returns early when libuv reports a poll
// error. libuv reports a socket with a pending error (a reset, a refused connect) as UV_EBADF and
// stops polling it, so with that adapter hiredis never read or wrote the socket again and never
// learnt the connection was gone: a Redis killed while one of our commands sat unread in its
// buffer resets the connection instead of closing it, and the loop kept believing it was
// connected until its next command (docs/cluster.md, "Faults"). Here an error hands hiredis
// the events it was waiting for; its read or write then meets the error and disconnects.
#pragma once

#include <uv.h>

struct redisAsyncContext;

namespace sluice::server::cluster {

// Installs the event hooks on `context` (before its connect callback is set). False when the
// context already has hooks or the poll handle cannot be made; the context is then unchanged.
bool attach_to_loop(redisAsyncContext* context, uv_loop_t* loop);

}  // namespace sluice::server::cluster
