#include "server/live/session_socket.hpp"

#include "server/live/wire_body.hpp"

namespace sluice::server {

SessionSocket::SessionSocket(LoopContext& loop, uint64_t id, const protocol::SessionOptions& options)
    : StreamSocket(loop, id), last_receive_ms_(started_ms()), session_(options) {}

SessionSocket::~SessionSocket() = default;

void SessionSocket::append_control_output(WriteBatch& batch) { append_session_output(session_, batch); }

void SessionSocket::on_bytes(std::span<const uint8_t> bytes) {
  last_receive_ms_ = loop_.now_ms();
  events_.clear();
  auto fed = session_.feed(bytes, events_);
  for (auto& event : events_) {
    if (closing()) break;
    on_session_event(event);
  }
  events_.clear();
  if (closing()) return;
  if (!fed) {
    on_protocol_error(fed.error().message(), bytes);
    return;
  }
  after_events();
  if (closing()) return;
  if (session_.has_output()) request_flush();
}

}  // namespace sluice::server
