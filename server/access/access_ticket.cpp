#include "server/access/access_ticket.hpp"

#include "server/access_log/access_log.hpp"

namespace sluice::server {

namespace {

// The session's line in the access log (docs/access_log.md): RTMP, RTMPS, SRT, WebRTC and HLS.
// HTTP-FLV plays and downloads ("http-flv", "http") are HTTP requests, whose lines HttpConnection
// writes.
void write_session_line(AccessAction action, const HookEvent& e, const SessionPeer* peer, uint64_t counted_bytes_out,
                        int status) {
  const bool tls = peer && peer->over_tls();
  const char* protocol = nullptr;
  const char* scheme = nullptr;
  if (e.protocol == "rtmp") {
    protocol = tls ? "RTMPS" : "RTMP";
    scheme = tls ? "rtmps" : "rtmp";
  } else if (e.protocol == "srt") {
    protocol = "SRT";
    scheme = "srt";
  } else if (e.protocol == "webrtc") {
    protocol = "WebRTC";
    scheme = "webrtc";
  } else if (e.protocol == "hls") {
    protocol = "HLS";
    scheme = "http";
  } else {
    return;
  }
  AccessRecord rec;
  rec.kind = AccessRecord::Kind::Session;
  rec.conn = e.client_id;
  rec.client = !e.address.empty() ? e.address : peer ? access_client(peer->peer()) : std::string();
  rec.method = action == AccessAction::Publish ? "PUBLISH" : "PLAY";
  std::string host = access_url_host(e.tc_url);
  if (host.empty()) host = access_log_host_name();
  rec.target = std::string(scheme) + "://" + host + "/" + e.app + "/" + e.stream;
  rec.protocol = protocol;
  rec.app = e.app;
  rec.stream = e.stream;
  rec.reason = e.reason;
  rec.status = status;
  rec.bytes_in = e.bytes_in.value_or(0);
  rec.bytes_out = e.bytes_out.value_or(counted_bytes_out);
  rec.duration_ms = e.duration_ms.value_or(0);
  rec.user_agent = e.user_agent;
  write_access_record(std::move(rec));
}

}  // namespace

void write_refused_access_line(AccessAction action, const HookEvent& event, const SessionPeer& peer,
                               const std::string& reason) {
  if (!access_log_enabled()) return;
  HookEvent e = event;
  e.reason = "refused: " + reason;
  e.bytes_in = peer.bytes_in();
  e.bytes_out = peer.bytes_out();
  e.duration_ms = 0;
  // "no stream 'x'" is a 404, a limit a 429; a refusal of any other kind a 403.
  const int status = access_session_status(reason);
  write_session_line(action, e, &peer, 0, status == 200 ? 403 : status);
}

void AccessTicket::take(AccessTicket& o) noexcept {
  gate_ = std::exchange(o.gate_, nullptr);
  action_ = o.action_;
  event_ = std::move(o.event_);
  seat_ = std::move(o.seat_);
  peer_ = o.peer_;
  loop_ = o.loop_;
  started_ms_ = o.started_ms_;
  admitted_unix_s_ = o.admitted_unix_s_;
  reason_ = std::move(o.reason_);
  counted_bytes_out_ = o.counted_bytes_out_;
  if (gate_ && peer_) {
    gate_->withdraw(&o);
    gate_->enroll(this);
  }
}

void AccessTicket::end(uint64_t now_ms) {
  seat_.release();
  AccessGate* gate = std::exchange(gate_, nullptr);
  if (!gate) return;
  if (peer_) gate->withdraw(this);
  if (now_ms == 0 && loop_) now_ms = loop_->now_ms();
  event_.duration_ms = now_ms > started_ms_ ? now_ms - started_ms_ : 0;
  if (peer_) {
    event_.bytes_in = peer_->bytes_in();
    event_.bytes_out = peer_->bytes_out();
  }
  event_.reason = reason_.empty() ? "ended" : reason_;
  if (access_log_enabled()) {
    write_session_line(action_, event_, peer_, counted_bytes_out_, access_session_status(event_.reason));
  }
  gate->notify_done(action_, std::move(event_));
}

}  // namespace sluice::server
