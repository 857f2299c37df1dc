// RtmpConnection: the events of the session on the socket, the batch it writes, limits, timeouts. The RTMP command
// handling is in commands.cpp.
#include "server/rtmp/connection.hpp"

#include "protocol/proxy_header.hpp"
#include "server/io/machine_memory.hpp"
#include "server/io/logging.hpp"
#include "server/rtmp/live_player.hpp"
#include "server/ingest/live_publisher.hpp"
#include "server/rtmp/vod_player.hpp"
#include "server/record/recorder.hpp"

namespace sluice::server {

namespace {
protocol::SessionOptions session_options(const config::Config& cfg) {
  protocol::SessionOptions o;
  o.role = protocol::SessionRole::Server;
  o.chunk_size = cfg.rtmp.chunk_size;
  o.window_ack_size = cfg.rtmp.window_ack_size;
  o.chunk_limits.max_message_size = cfg.rtmp.max_message_size;
  o.max_streams = cfg.rtmp.limits.streams_per_connection;
  o.pre_connect_max_message_size = cfg.rtmp.limits.pre_connect_message_size;
  return o;
}
}  // namespace

RtmpConnection::RtmpConnection(RtmpServices& services, uint64_t id)
    : SessionSocket(services.publish.loop, id, session_options(services.publish.loop.config())), services_(services) {
  last_ping_ms_ = started_ms();
  const auto& limits = services.publish.loop.config().rtmp.limits;
  output_guard_.configure(limits.output_soft_bytes, limits.output_hard_bytes,
                          static_cast<uint64_t>(limits.output_timeout.count()));
}

RtmpConnection::~RtmpConnection() {
  if (services_.on_destroyed) services_.on_destroyed(this);
}

std::vector<std::string> RtmpConnection::playing_streams() const {
  std::vector<std::string> out;
  for (const auto& p : players_) out.push_back(app_ + "/" + p->name());
  for (const auto& p : vod_players_) out.push_back(app_ + "/" + p->name());
  return out;
}

std::vector<RtmpConnection::RecordingInfo> RtmpConnection::recordings() const {
  std::vector<RecordingInfo> out;
  for (const auto& p : publishers_) {
    const Recorder* r = p->recorder();
    if (r && r->recording()) out.push_back({p->key(), r->path(), r->bytes(), r->file_duration_ms()});
  }
  return out;
}

RtmpConnection::RecordControl RtmpConnection::control_recording(const std::string& key, bool start) {
  if (closing()) return RecordControl::NotPublishedHere;
  for (const auto& p : publishers_) {
    if (p->key() != key) continue;
    const config::AppConfig* app = config().find_app(app_);
    if (!app || !app->record.enabled()) return RecordControl::AppDoesNotRecord;
    if (!start) return p->stop_recording("stopped through the API") ? RecordControl::Done : RecordControl::NotRecording;
    if (p->recording()) return RecordControl::AlreadyRecording;
    p->start_recording(*app);
    return RecordControl::Done;
  }
  return RecordControl::NotPublishedHere;
}

void RtmpConnection::on_open() { SLUICE_LOG_DEBUG("conn={} event=accept peer={}", id(), peer()); }

void RtmpConnection::on_session_event(protocol::SessionEvent& event) {
  if (waiting_) {
    held_.push_back(std::move(event));  // behind a decision the gate has not made yet
  } else {
    handle_event(event);
  }
}

void RtmpConnection::on_protocol_error(const std::string& message, std::span<const uint8_t> bytes) {
  // A balancer's PROXY header on a listener without rtmp.proxy_protocol: the log says so (the
  // header is never read there: docs/proxy_protocol.md, "Security").
  const bool proxy = bytes_in() == bytes.size() && protocol::looks_like_proxy_header(bytes);
  if (message.find(protocol::kPartialBoundMark) != std::string::npos)
    GuardCounters::bump(GuardEvent::PartialMessageBound);
  SLUICE_LOG_WARN("conn={} peer={} event=protocol_error error=\"{}{}\"", id(), peer(), message,
                  proxy ? " (a PROXY header: this listener has no proxy_protocol)" : "");
  close("protocol error: " + message);
}

void RtmpConnection::after_events() {
  const uint64_t budget = reassembly_budget_of(config().rtmp.limits);
  if (!reassembly_.update(session_.reassembly_bytes(), budget)) {
    GuardCounters::bump(GuardEvent::ReassemblyBudget);
    SLUICE_LOG_WARN("conn={} peer={} event=reassembly_budget held={} total={} budget={}", id(), peer(),
                    reassembly_.held(), ReassemblyLease::total(), budget);
    close("partial messages over rtmp.limits.reassembly_budget");
    return;
  }
  check_output();
}

void RtmpConnection::check_output() {
  const uint64_t unsent = session_.output_size() + write_queue_bytes();
  switch (output_guard_.update(unsent, loop_.now_ms())) {
    case OutputGuard::Action::None: return;
    case OutputGuard::Action::Pause:
      GuardCounters::bump(GuardEvent::RtmpOutputPaused);
      SLUICE_LOG_DEBUG("conn={} event=output_paused unsent={}", id(), unsent);
      stop_reading();
      return;
    case OutputGuard::Action::Resume:
      SLUICE_LOG_DEBUG("conn={} event=output_resumed unsent={}", id(), unsent);
      if (!waiting_) start_reading();
      return;
    case OutputGuard::Action::Close: {
      GuardCounters::bump(GuardEvent::RtmpOutputOverflow);
      const auto& limits = config().rtmp.limits;
      std::string why = unsent > limits.output_hard_bytes
                            ? "unsent output " + std::to_string(unsent) + " bytes over rtmp.limits.output_hard_bytes"
                            : "output not read for " +
                                  std::to_string(output_guard_.paused_for_ms(loop_.now_ms()) / 1000) +
                                  " s (rtmp.limits.output_timeout)";
      SLUICE_LOG_WARN("conn={} peer={} event=output_overflow unsent={} reason=\"{}\"", id(), peer(), unsent, why);
      close(why);
      return;
    }
  }
}

bool RtmpConnection::fill(WriteBatch& batch, size_t max_bytes) {
  append_control_output(batch);
  bool more = false;
  for (auto& p : players_) {
    if (batch.bytes() >= max_bytes) return true;
    more |= p->fill(batch, max_bytes - batch.bytes());
  }
  return more;
}

void RtmpConnection::on_nothing_to_write() {
  if (session_.closing()) close("closed after reply");
}

void RtmpConnection::on_written(bool) {
  // A reply the connection closes behind (close_after_flush) is out: one more flush sends what is
  // still queued, or finds nothing and closes (on_nothing_to_write). Without it the connection
  // stayed open until the client did something (a refused OBS until the idle timeout).
  if (session_.closing()) request_flush();
  resume_vod_players();
  if (!closing() && output_guard_.paused()) check_output();
}

void RtmpConnection::resume_vod_players() {
  // VOD players wait for the connection to drain before reading more of their file.
  for (size_t i = 0; i < vod_players_.size() && !closing(); ++i) vod_players_[i]->on_drain();
}

void RtmpConnection::on_tick(uint64_t now) {
  const auto& rtmp = config().rtmp;
  if (output_guard_.paused()) {
    check_output();
    if (closing()) return;
  }
  // Its publisher was taken over: told why (end_replaced_publisher), now closed.
  if (replaced_at_ms_ != 0 && now - replaced_at_ms_ >= 1000) {
    close("its publisher was replaced by a new one");
    return;
  }
  if (!session_.handshake_done() || !connected_) {
    if (now - started_ms() > static_cast<uint64_t>(rtmp.handshake_timeout.count())) {
      close(session_.handshake_done() ? "connect timeout" : "handshake timeout");
    }
    return;
  }
  if (lifetime_deadline_ms_ != 0 && now >= lifetime_deadline_ms_) {
    GuardCounters::bump(GuardEvent::SessionLifetime);
    close("session lifetime given by the hook is over");
    return;
  }
  // Waiting for a hook is not being idle (reading is paused meanwhile).
  if (waiting_) last_receive_ms_ = now;
  const uint64_t silent = now > last_receive_ms_ ? now - last_receive_ms_ : 0;
  if (rtmp.idle_timeout.count() > 0 && silent > static_cast<uint64_t>(rtmp.idle_timeout.count())) {
    close("idle timeout (nothing received for " + std::to_string(silent / 1000) + " s)");
    return;
  }
  // Players send little; a ping tells live peers from dead ones before the idle timeout.
  if (rtmp.ping_interval.count() > 0 && silent > static_cast<uint64_t>(rtmp.ping_interval.count()) &&
      now - last_ping_ms_ > static_cast<uint64_t>(rtmp.ping_interval.count())) {
    last_ping_ms_ = now;
    session_.send_ping_request(static_cast<uint32_t>(now));
    request_flush();
  }
}

bool RtmpConnection::request_reconnect() {
  const protocol::ConnectCommand& c = session_.connect_info();
  if (closing() || !connected_ || !c.can_reconnect()) return false;
  session_.request_reconnect(c.tc_url, "This server is shutting down; reconnect to continue.");
  request_flush();
  SLUICE_LOG_INFO("conn={} peer={} event=reconnect_request app={} tc_url=\"{}\"", id(), peer(), app_,
                  printable(c.tc_url));
  return true;
}

void RtmpConnection::end_publishers(const std::string& reason) {
  if (closing()) return;
  for (auto& p : publishers_) p->ticket.set_end_reason(reason);
  publishers_.clear();
}

void RtmpConnection::shutdown_gracefully() {
  if (closing()) return;
  // Publishers first: ending a publication queues its players' notices (maybe on this
  // connection). The players stay until what they queued is written.
  end_publishers("server stopped");
  for (auto& p : players_) p->ticket.set_end_reason("server stopped");
  for (auto& p : vod_players_) p->ticket.set_end_reason("server stopped");
  vod_players_.clear();
  for (auto& p : players_) p->end();
  session_.close_after_flush();
  request_flush();
}

void RtmpConnection::end_streams() {
  // Publishers first: ending a publication notifies its players (maybe on this connection).
  publishers_.clear();
  players_.clear();
  vod_players_.clear();
}

void RtmpConnection::on_close(const std::string& reason) {
  if (pending_ != 0) services_.publish.gate.cancel(std::exchange(pending_, 0));
  held_.clear();
  for (auto& p : publishers_) p->ticket.set_end_reason(reason);
  for (auto& p : players_) p->ticket.set_end_reason(reason);
  for (auto& p : vod_players_) p->ticket.set_end_reason(reason);
  end_streams();
  uint64_t duration = loop_.now_ms() - started_ms();
  SLUICE_LOG_INFO("conn={} peer={} app={} event=close reason=\"{}\" bytes_in={} bytes_out={} duration_ms={} tls={}",
                  id(), peer(), app_.empty() ? "-" : app_, reason, bytes_in(), bytes_out(), duration, tls_summary());
}

}  // namespace sluice::server
