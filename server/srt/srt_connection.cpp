#include "server/srt/srt_connection.hpp"

#include <algorithm>

#include "server/access/access_ticket.hpp"
#include "server/access_log/access_log.hpp"
#include "server/io/guard_counters.hpp"
#include "server/io/logging.hpp"
#include "server/live/live_join.hpp"
#include "server/srt/srt_service.hpp"
#include "server/srt/srt_socket.hpp"

namespace sluice::server {

namespace {
constexpr size_t kMaxMessage = 1500;  // more than any SRT payload (1456 at most)
}  // namespace

SrtConnection::SrtConnection(SrtService& service, PublishServices& services, SRTSOCKET socket, uint64_t id)
    : SrtTsOutput(services.loop),
      service_(service),
      services_(services),
      socket_(socket),
      id_(id),
      started_ms_(services.loop.now_ms()) {}

SrtConnection::~SrtConnection() {
  *alive_ = false;
  // Here, not in close(): the service deletes a connection no sooner than kMinSocketLifeMs after
  // its accept (srt_service.cpp), so that the caller learns of a close right behind its handshake.
  srt_close(socket_);
}

void SrtConnection::open() {
  peer_ = srt_peer(socket_);
  char sid[protocol::kMaxSrtStreamId + 1] = {};
  int len = sizeof sid - 1;
  if (srt_getsockflag(socket_, SRTO_STREAMID, sid, &len) != 0) len = 0;
  // The handshake checked it already; a stream id read back wrong is the only way to fail here.
  auto parsed = protocol::parse_srt_stream_id(std::string_view(sid, static_cast<size_t>(len)));
  if (!parsed) return close("bad stream id");
  stream_ = std::move(*parsed);
  const config::AppConfig* app = services_.loop.config().find_app(stream_.app);
  if (app == nullptr) return close("no app");
  const bool publishes = stream_.mode == protocol::SrtStreamId::Mode::Publish;
  SLUICE_LOG_INFO("conn={} peer={} event=srt_connect app={} stream=\"{}\" mode={}", id_, peer(), stream_.app,
                  printable(stream_.name), publishes ? "publish" : "request");
  watch(SRT_EPOLL_ERR);
  HookEvent ev = hook_base_event(stream_.name);
  ev.query = stream_.query;
  std::weak_ptr<bool> alive = alive_;
  pending_gate_ =
      services_.gate.admit(publishes ? AccessAction::Publish : AccessAction::Play, *app, peer_.raw, std::move(ev),
                           [this, alive, app = services_.loop.keep(*app)](AccessOutcome&& o) {
                             if (alive.expired() || closed_) return;
                             pending_gate_ = 0;
                             admitted(app, std::move(o));
                           });
}

HookEvent SrtConnection::hook_base_event(const std::string& stream) const {
  HookEvent e;
  e.client_id = id_;
  set_hook_peer(e, peer());
  e.app = stream_.app;
  e.stream = stream;
  e.protocol = "srt";
  return e;
}

void SrtConnection::refuse(const char* event, const std::string& reason) {
  SLUICE_LOG_WARN("conn={} peer={} event={} app={} stream=\"{}\" reason=\"{}\"", id_, peer(), event, stream_.app,
                  printable(stream_.name), reason);
  const bool publishes = stream_.mode == protocol::SrtStreamId::Mode::Publish;
  if (access_log_enabled()) {
    write_refused_access_line(publishes ? AccessAction::Publish : AccessAction::Play, hook_base_event(stream_.name),
                              *this, reason);
  }
  close(reason);
}

void SrtConnection::admitted(const config::AppRef& app, AccessOutcome&& o) {
  const bool publishes = stream_.mode == protocol::SrtStreamId::Mode::Publish;
  if (!o.allowed()) return refuse(publishes ? "publish_rejected" : "play_rejected", "not allowed: " + o.reason);
  if (!publishes) return read(*app, std::move(o));
  auto held = std::make_shared<AccessOutcome>(std::move(o));
  std::weak_ptr<bool> alive = alive_;
  claim_publish(
      services_, *app, *this, held->name, [this, alive] { return !alive.expired() && !closed_; },
      [this, app, held](PublishClaim c) { publish(*app, std::move(*held), c); });
}

void SrtConnection::publish(const config::AppConfig& app, AccessOutcome&& o, const PublishClaim& claim) {
  const std::string& name = o.name;
  if (!claim.granted()) {
    if (claim.refusal == PublishRefusal::Full) GuardCounters::bump(GuardEvent::StreamsTotal);
    return refuse("publish_rejected", publish_refusal_text(app, name, claim));
  }
  key_ = claim.key;
  HookEvent ev = hook_base_event(name);
  ev.query = stream_.query;
  publisher_ = start_publisher(
      *this, app, 0, name, claim,
      AccessTicket(services_.gate, AccessAction::Publish, std::move(ev), std::move(o.seat), *this, services_.loop),
      o.push);
  const uint32_t takeovers = claim.handover.takeovers;
  SLUICE_LOG_INFO("conn={} peer={} event=publish app={} stream={} proto=srt{}{}", id_, peer(), app.name, name,
                  name != stream_.name ? " renamed_from=" + stream_.name : "",
                  takeovers != 0 ? " takeovers=" + std::to_string(takeovers) : "");
  watch(SRT_EPOLL_IN | SRT_EPOLL_ERR);
  receive_media();  // what came while the gate decided
}

void SrtConnection::read(const config::AppConfig& app, AccessOutcome&& o) {
  const std::string& name = o.name;
  StreamRegistry& registry = services_.registry;
  LiveJoin join = check_live_join(registry, app, name);
  if (join.outcome == LiveJoin::Outcome::BadName) {
    return refuse("play_rejected", "invalid stream name from the on_play hook");
  }
  if (join.outcome == LiveJoin::Outcome::NotLive) return refuse("play_rejected", "no stream '" + name + "'");
  media::StreamHub* hub = live_join_hub(registry, app, join.key);
  if (hub == nullptr) return refuse("play_rejected", "rtmp.limits.max_streams reached");
  key_ = join.key;
  HookEvent ev = hook_base_event(name);
  ev.query = stream_.query;
  reader_ = std::make_unique<SrtReader>(*this, registry, key_, *hub, services_.loop.config().rtmp.player_queue);
  reader_->ticket =
      AccessTicket(services_.gate, AccessAction::Play, std::move(ev), std::move(o.seat), *this, services_.loop);
  SLUICE_LOG_INFO("conn={} peer={} event=play app={} stream={} proto=srt live={}", id_, peer(), app.name, name,
                  join.state);
  watch(SRT_EPOLL_IN | SRT_EPOLL_ERR);
  discard_input();
  request_flush();
}

void SrtConnection::watch(int events) {
  if (!closed_) service_.poller()->watch(socket_, events);
}

void SrtConnection::on_ready(int events) {
  if (closed_) return;
  if (events & SRT_EPOLL_IN) {
    if (publisher_) {
      receive_media();
    } else {
      discard_input();
    }
  }
  if (closed_) return;
  if (events & SRT_EPOLL_OUT) on_writable();
  if (closed_) return;
  if (events & SRT_EPOLL_ERR) {
    const SRT_SOCKSTATUS st = srt_getsockstate(socket_);
    close(st == SRTS_BROKEN ? "connection broken (peer gone or idle timeout)" : "closed by peer");
  }
}

void SrtConnection::receive_media() {
  if (closed_ || !publisher_) return;
  std::string error;
  const SrtTsReceiver::Outcome got = receiver_.receive(
      socket_,
      [this](media::ts::TsDemuxer::Frame& f) {
        if (!publisher_) return false;
        publisher_->on_frame(f.type, f.timestamp, Slice::adopt(std::move(f.body)));
        return true;
      },
      error);
  if (got == SrtTsReceiver::Outcome::Closed) return close(error);
  if (got == SrtTsReceiver::Outcome::Bad) {
    GuardCounters::bump(GuardEvent::SrtBadInput);
    refuse("srt_bad_input", error);
  }
}

void SrtConnection::discard_input() {
  char buf[kMaxMessage];
  while (!closed_) {
    const int n = srt_recvmsg(socket_, buf, sizeof buf);
    if (n == SRT_ERROR) {
      if (srt_getlasterror(nullptr) != SRT_EASYNCRCV) close(srt_error("srt_recvmsg"));
      return;
    }
    if (n <= 0) return;
    discarded_ += static_cast<uint64_t>(n);
  }
}

void SrtConnection::watch_output(bool writable) {
  watch(SRT_EPOLL_IN | SRT_EPOLL_ERR | (writable ? static_cast<int>(SRT_EPOLL_OUT) : 0));
}

void SrtConnection::end_publishing(const std::string& why) {
  if (!publisher_) return;
  publisher_->ticket.set_end_reason(why);
  publisher_.reset();
}

void SrtConnection::end_replaced_publisher(uint32_t, const std::string& why, bool) {
  if (!publisher_) return;
  SLUICE_LOG_WARN("conn={} peer={} event=unpublish app={} stream={} proto=srt reason=\"{}\"", id_, peer(), stream_.app,
                  stream_.name, why);
  publisher_->ticket.set_end_reason(why);
  publisher_.reset();
  // SRT has no status to carry the reason: the caller sees its connection close.
  close(why);
}

void SrtConnection::close(const std::string& reason) {
  if (closed_) return;
  if (pending_gate_ != 0) services_.gate.cancel(std::exchange(pending_gate_, 0));
  if (publisher_) {
    publisher_->ticket.set_end_reason("closed: " + reason);
    publisher_.reset();
  }
  if (reader_) {
    reader_->ticket.set_end_reason("closed: " + reason);
    reader_.reset();
  }
  closed_ = true;
  loop_.flush().cancel(this);
  const media::ts::TsDemuxer::Stats st = receiver_.demuxer().stats();
  SLUICE_LOG_INFO(
      "conn={} peer={} event=srt_close reason=\"{}\" bytes_in={} bytes_out={} continuity_errors={} damaged_packets={}",
      id_, peer(), reason, bytes_in(), bytes_out(), st.continuity_errors, st.damaged_packets);
  service_.poller()->unwatch(socket_);
  service_.retire(this);
}

}  // namespace sluice::server
