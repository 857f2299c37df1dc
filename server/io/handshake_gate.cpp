#include "server/io/handshake_gate.hpp"

#include <algorithm>

#include "server/io/stream_socket.hpp"

namespace sluice::server {

void HandshakeGate::start(uv_loop_t* loop, uint32_t per_iteration) {
  set_per_iteration(per_iteration);
  left_ = per_iteration_;
  uv_prepare_init(loop, &prepare_);
  prepare_.data = this;
  uv_prepare_start(&prepare_, &HandshakeGate::on_prepare);
  // Not a reason for the loop to stay alive.
  uv_unref(reinterpret_cast<uv_handle_t*>(&prepare_));
  started_ = true;
}

void HandshakeGate::close_handles() {
  waiting_.clear();
  if (!started_) return;
  started_ = false;
  uv_close(reinterpret_cast<uv_handle_t*>(&prepare_), nullptr);
}

bool HandshakeGate::admit() {
  if (left_ == 0) return false;
  --left_;
  return true;
}

void HandshakeGate::defer(StreamSocket* s) {
  waiting_.push_back(s);
  ++deferred_total_;
}

void HandshakeGate::forget(StreamSocket* s) { std::erase(waiting_, s); }

void HandshakeGate::on_prepare(uv_prepare_t* prepare) {
  auto* self = static_cast<HandshakeGate*>(prepare->data);
  self->left_ = self->per_iteration_;
  // The oldest waiting sockets read again in this iteration's poll (their bytes are in the kernel).
  for (uint32_t n = 0; n < self->per_iteration_ && !self->waiting_.empty(); ++n) {
    StreamSocket* s = self->waiting_.front();
    self->waiting_.pop_front();
    s->resume_handshake_reads();
  }
}

}  // namespace sluice::server
