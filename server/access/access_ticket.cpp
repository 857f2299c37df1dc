#include "server/access/access_ticket.hpp"

namespace sluice::server {

void AccessTicket::end(uint64_t now_ms) {
  seat_.release();
  AccessGate* gate = std::exchange(gate_, nullptr);
  if (!gate) return;
  if (now_ms == 0 && loop_) now_ms = loop_->now_ms();
  event_.duration_ms = now_ms > started_ms_ ? now_ms - started_ms_ : 0;
  if (peer_) {
    event_.bytes_in = peer_->bytes_in();
    event_.bytes_out = peer_->bytes_out();
  }
  event_.reason = reason_.empty() ? "ended" : reason_;
  gate->notify_done(action_, std::move(event_));
}

}  // namespace sluice::server
