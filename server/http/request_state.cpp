#include "server/http/request_state.hpp"

namespace sluice::server {

const char* request_state_name(RequestState s) {
  switch (s) {
    case RequestState::Idle: return "idle";
    case RequestState::Head: return "head";
    case RequestState::Body: return "body";
    case RequestState::Ready: return "ready";
    case RequestState::Responding: return "responding";
    case RequestState::Finishing: return "finishing";
    case RequestState::Lingering: return "lingering";
  }
  return "?";
}

void HttpRequestCycle::begin_request(uint64_t now_ms) {
  if (state_ == RequestState::Idle) enter(RequestState::Head, now_ms);
}

void HttpRequestCycle::head_complete(bool has_body, bool answer_from_head) {
  if (state_ != RequestState::Head) return;
  body_unread_ = has_body;
  state_ = answer_from_head ? RequestState::Ready : RequestState::Body;
}

void HttpRequestCycle::message_complete() {
  body_unread_ = false;
  if (state_ == RequestState::Head || state_ == RequestState::Body) state_ = RequestState::Ready;
}

void HttpRequestCycle::dispatched() {
  if (state_ == RequestState::Ready) state_ = RequestState::Responding;
}

void HttpRequestCycle::respond_now() {
  if (state_ <= RequestState::Ready) state_ = RequestState::Responding;
}

void HttpRequestCycle::response_done(uint64_t now_ms, bool reusable) {
  if (state_ != RequestState::Responding) return;
  first_request_ = false;
  enter(reusable && !body_unread_ ? RequestState::Idle : RequestState::Finishing, now_ms);
}

void HttpRequestCycle::finish_after_write() {
  if (state_ <= RequestState::Body) state_ = RequestState::Finishing;
}

void HttpRequestCycle::begin_linger(uint64_t now_ms) {
  if (state_ == RequestState::Finishing) enter(RequestState::Lingering, now_ms);
}

HttpTimeout HttpRequestCycle::timeout(uint64_t now, uint64_t last_read_ms,
                                      std::optional<uint64_t> write_pending_since) const {
  if (state_ == RequestState::Lingering) return now - since_ms_ > kLingerMs ? HttpTimeout::Linger : HttpTimeout::None;
  // Whatever the state, a client that takes nothing of what is written is gone.
  if (write_pending_since) return now - *write_pending_since > kSendTimeoutMs ? HttpTimeout::Send : HttpTimeout::None;
  switch (state_) {
    case RequestState::Idle:
      if (first_request_) return now - since_ms_ > kHeaderTimeoutMs ? HttpTimeout::NoRequest : HttpTimeout::None;
      return now - since_ms_ > kKeepAliveTimeoutMs ? HttpTimeout::KeepAlive : HttpTimeout::None;
    case RequestState::Head: return now - since_ms_ > kHeaderTimeoutMs ? HttpTimeout::Head : HttpTimeout::None;
    case RequestState::Body: return now - last_read_ms > kBodyTimeoutMs ? HttpTimeout::Body : HttpTimeout::None;
    case RequestState::Responding:
      // A file being opened or a live stream waiting for its publisher has no limit of its own.
      return HttpTimeout::Responder;
    case RequestState::Ready:
    case RequestState::Finishing:  // it lingers once written; until then the send limit applies
    case RequestState::Lingering: break;
  }
  return HttpTimeout::None;
}

}  // namespace sluice::server
