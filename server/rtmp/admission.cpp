// RtmpConnection: admission through the access gate (server/access/gate.hpp). A decision may
// come from a hook, later: the connection then stops reading and holds the events behind it, so
// that media or commands that follow a publish or play are handled after its answer, in order.
#include "server/access_log/access_log.hpp"
#include "server/io/logging.hpp"
#include "server/rtmp/connection.hpp"

namespace sluice::server {

void RtmpConnection::ask(const std::function<uint64_t(AccessDone)>& start, std::function<void(AccessOutcome&&)> then) {
  waiting_ = true;
  asking_ = true;
  uint64_t id = start([this, then = std::move(then)](AccessOutcome&& o) {
    pending_ = 0;
    waiting_ = false;
    if (closing()) return;
    then(std::move(o));
    if (!asking_) after_decision();  // a hook answered: go on with what waited
  });
  asking_ = false;
  if (waiting_) {
    pending_ = id;
    stop_reading();
  }
}

void RtmpConnection::after_decision() {
  handle_held_events();
  if (closing()) return;
  if (!waiting_ && !output_guard_.paused() && !reading()) start_reading();
  if (session_.has_output()) request_flush();
  check_output();
}

void RtmpConnection::handle_held_events() {
  while (!waiting_ && !held_.empty() && !closing()) {
    protocol::SessionEvent ev = std::move(held_.front());
    held_.pop_front();
    handle_event(ev);
  }
}

HookEvent RtmpConnection::hook_event(const std::string& stream, const std::string& query) const {
  const protocol::ConnectCommand& c = session_.connect_info();
  HookEvent e;
  e.client_id = id();
  set_hook_peer(e, peer());
  e.app = app_;
  e.stream = stream;
  // The stream name's query first (what OBS and ffmpeg send), then the one of the app or tcUrl.
  e.query = query;
  if (!c.app_query.empty()) e.query += (e.query.empty() ? "" : "&") + c.app_query;
  e.tc_url = c.tc_url;
  e.user_agent = c.flash_ver;
  e.protocol = "rtmp";
  return e;
}

AccessTicket RtmpConnection::ticket_for(AccessAction action, const std::string& stream, const std::string& query,
                                        Seat seat) {
  return AccessTicket(services_.publish.gate, action, hook_event(stream, query), std::move(seat), *this, loop_);
}

void RtmpConnection::note_lifetime(uint64_t lifetime_s) {
  if (lifetime_s == 0) return;
  uint64_t deadline = loop_.now_ms() + lifetime_s * 1000;
  if (lifetime_deadline_ms_ == 0 || deadline < lifetime_deadline_ms_) lifetime_deadline_ms_ = deadline;
}

void RtmpConnection::refuse_admission(uint32_t stream_id, bool publish, const std::string& name,
                                      const AccessOutcome& o) {
  const char* by = o.refused_by == RefusedBy::Hook ? "hook" : o.refused_by == RefusedBy::Limit ? "limit" : "rules";
  if (publish) {
    session_.reject_publish(stream_id, protocol::Status::PublishRejected,
                            "Publishing is not allowed: " + o.reason + ".");
  } else {
    session_.send_status(stream_id, protocol::Status::PlayFailed, "Playing is not allowed: " + o.reason + ".");
  }
  if (log_limit_.allow(loop_.now_ms(), suppressed_logs_)) {
    SLUICE_LOG_WARN("conn={} peer={} event={}_rejected app={} stream=\"{}\" by={} reason=\"{}\" suppressed={}", id(),
                    peer(), publish ? "publish" : "play", app_, printable(name), by, o.reason, suppressed_logs_);
  }
  if (access_log_enabled()) {
    write_refused_access_line(publish ? AccessAction::Publish : AccessAction::Play, hook_event(name, ""), *this,
                              o.reason);
  }
  // Told why, then closed: a client that is refused must not retry on the same connection.
  session_.close_after_flush();
  request_flush();
}

void RtmpConnection::finish_connect(AccessOutcome&& o) {
  if (!o.allowed()) {
    SLUICE_LOG_WARN("conn={} peer={} event=connect_rejected app={} by=hook reason=\"{}\"", id(), peer(), app_,
                    o.reason);
    session_.reject_connect("Connection refused: " + o.reason + ".");
    request_flush();
    app_.clear();
    return;
  }
  note_lifetime(o.lifetime_s);
  connected_ = true;
  session_.accept_connect();
  request_flush();
  const protocol::ConnectCommand& c = session_.connect_info();
  SLUICE_LOG_INFO("conn={} peer={} event=connect app={} tc_url=\"{}\" flash_ver=\"{}\"", id(), peer(), app_,
                  printable(c.tc_url), printable(c.flash_ver));
  // Accepted before the listeners closed, admitted after the drain began (a hook's answer).
  if (services_.draining) request_reconnect();
}

}  // namespace sluice::server
