#include "server/rtmp/service.hpp"

#include <sys/socket.h>

#include <algorithm>

#include "server/io/listener.hpp"
#include "server/io/logging.hpp"
#include "server/io/loop_context.hpp"
#include "server/io/proxy_header_reader.hpp"
#include "server/io/tls_reloader.hpp"
#include "server/live/worker_mesh.hpp"

namespace sluice::server {

RtmpService::RtmpService(LoopContext& loop, RtmpServices& services, WorkerMesh* mesh,
                         std::function<size_t()> other_connections)
    : loop_(loop),
      services_(services),
      mesh_(mesh),
      other_connections_(std::move(other_connections)),
      listeners_([this](bool tls) {
        return std::make_unique<TcpListener>(
            loop_.loop(), tls ? "rtmps" : "rtmp", loop_.config().rtmp.limits.accepts_per_iteration,
            [this, tls](int fd, const sockaddr_storage& peer) { on_accepted(fd, tls, peer); });
      }) {
  services_.on_destroyed = [this](RtmpConnection* c) {
    if (connections_.erase(c) && mesh_) --mesh_->rtmp_connections;
  };
}

RtmpService::~RtmpService() { services_.on_destroyed = nullptr; }

size_t RtmpService::connection_count() const { return mesh_ ? mesh_->rtmp_connections.load() : connections_.size(); }

// Every worker has the TLS context: RTMPS connections are handed round like RTMP ones (before
// their handshake, so no TLS state ever moves between loops), and every worker reads the PROXY
// headers of the connections handed to it.
Result<void> RtmpService::start() {
  const config::Config& cfg = loop_.config();
  if (cfg.rtmps.enabled()) {
    tls_ = std::make_unique<TlsReloader>(loop_.loop(), cfg.rtmps.certificates, loop_.worker(), cfg.rtmps.seal_records);
    if (auto r = tls_->start(); !r) return r.error();
  }
  if (expects_proxy_header(false) || expects_proxy_header(true)) {
    proxy_reader_ = std::make_unique<ProxyHeaderReader>(
        loop_.loop(), ProxyHeaderReader::timeout_for(cfg.rtmp.handshake_timeout),
        [this](int fd, uint64_t id, bool tls, PeerAddress peer) { open_after_header(fd, id, tls, std::move(peer)); });
  }
  return ok();
}

namespace {

// The addresses a configuration has the RTMP side listen on.
std::vector<ListenerSet::Address> rtmp_addresses(const config::Config& c) {
  std::vector<ListenerSet::Address> out;
  for (const auto& a : c.rtmp.listen) out.push_back({a, false});
  if (c.rtmps.enabled()) {
    for (const auto& a : c.rtmps.listen) out.push_back({a, true});
  }
  return out;
}

}  // namespace

Result<void> RtmpService::listen(std::vector<std::string>& bound) {
  return listeners_.open_missing(rtmp_addresses(loop_.config()), TcpListener::Sharing::Alone, bound);
}

Result<void> RtmpService::open_listeners(const config::Config& next, std::vector<std::string>& bound) {
  return listeners_.open_missing(rtmp_addresses(next), TcpListener::Sharing::Alone, bound);
}

void RtmpService::close_unlisted_listeners(const config::Config& next) {
  listeners_.close_unlisted(rtmp_addresses(next));
}

void RtmpService::on_accepted(int fd, bool tls, const sockaddr_storage& peer) {
  // Sockets still waiting for their PROXY header hold descriptors: they count too.
  const size_t waiting = proxy_reader_ ? proxy_reader_->pending() : 0;
  const std::string refusal = stopping_ ? std::string()
                                        : admission_.over_limit(connection_count() + other_connections_() + waiting,
                                                                loop_.config().rtmp.max_connections);
  const bool refuse = stopping_ || !refusal.empty();
  if (!refuse && hand_over(fd, tls)) return;
  if (!refuse && expects_proxy_header(tls)) return read_proxy_header(fd, loop_.next_connection_id(), tls);
  if (mesh_) ++mesh_->rtmp_connections;
  // The address accept() gave: no getpeername for this connection.
  open(fd, loop_.next_connection_id(), tls, accepted_peer(peer), refusal);
}

// Connections go to the workers in turn; true when this one went to another worker, which then
// owns fd.
bool RtmpService::hand_over(int fd, bool tls) {
  if (!mesh_ || mesh_->size() < 2) return false;
  const uint32_t to = next_worker_;
  next_worker_ = (next_worker_ + 1) % static_cast<uint32_t>(mesh_->size());
  if (to == loop_.worker()) return false;
  ++mesh_->rtmp_connections;
  auto e = std::make_unique<MeshEvent>();
  e->kind = MeshEvent::Kind::Accept;
  e->from = loop_.worker();
  e->fd = fd;
  e->tls = tls;
  e->id = loop_.next_connection_id();
  mesh_->post(to, std::move(e));
  return true;
}

void RtmpService::adopt(int fd, uint64_t id, bool tls) {
  if (!stopping_ && expects_proxy_header(tls)) {
    // Not a connection until its header is in: the sender's count is taken back,
    // open_after_header counts it again.
    --mesh_->rtmp_connections;
    return read_proxy_header(fd, id, tls);
  }
  open(fd, id, tls, std::nullopt);
}

// The listener family travels with a handed-over socket (MeshEvent::tls), and with it the
// setting: rtmp.proxy_protocol or rtmps.proxy_protocol.
bool RtmpService::expects_proxy_header(bool tls) const {
  const config::Config& cfg = loop_.config();
  return tls ? cfg.rtmps.proxy_protocol.enabled : cfg.rtmp.proxy_protocol.enabled;
}

void RtmpService::read_proxy_header(int fd, uint64_t id, bool tls) {
  const config::Config& cfg = loop_.config();
  const config::ProxyProtocolConfig& pp = tls ? cfg.rtmps.proxy_protocol : cfg.rtmp.proxy_protocol;
  proxy_reader_->start(fd, id, {tls ? "rtmps" : "rtmp", tls, pp.from});
}

// A socket whose PROXY header is in becomes a connection, limits.per_ip counted on the client's
// address.
void RtmpService::open_after_header(int fd, uint64_t id, bool tls, PeerAddress peer) {
  if (mesh_) ++mesh_->rtmp_connections;
  open(fd, id, tls, std::move(peer));
}

void RtmpService::open(int fd, uint64_t id, bool tls, std::optional<PeerAddress> peer, const std::string& refusal) {
  auto* c = new RtmpConnection(services_, id);
  connections_.insert(c);
  if (!c->open_accepted(fd, tls && tls_ ? tls_->context() : nullptr, std::move(peer))) return;
  if (stopping_) {
    c->close("server is stopping");
  } else if (!refusal.empty()) {
    c->close(refusal);
  } else {
    check_peer_limit(*c);
  }
}

void RtmpService::check_peer_limit(RtmpConnection& c) {
  const uint32_t per_ip = loop_.config().limits.per_ip;
  if (c.take_peer_slot(per_ip)) return;
  admission_.per_ip_refused(c.id(), c.peer(), per_ip, loop_.now_ms());
  c.close("too many connections from this address (limits.per_ip=" + std::to_string(per_ip) + ")");
}

void RtmpService::stop_listening() { listeners_.close_all(); }

void RtmpService::stop() {
  stopping_ = true;
  stop_listening();
  if (proxy_reader_) proxy_reader_->close_all();
}

void RtmpService::tick(uint64_t now_ms) {
  sweep_ = snapshot();
  sweep_at_ = 0;
  sweep_now_ms_ = now_ms;
  continue_sweep();
}

void RtmpService::continue_sweep() {
  // The tick's time, or the loop's when later: a slice in a later iteration must not judge a
  // connection that has read since by the older time.
  const uint64_t now_ms = std::max(sweep_now_ms_, loop_.now_ms());
  size_t closed = 0;
  while (sweep_at_ < sweep_.size() && closed < kClosesPerIteration) {
    RtmpConnection* c = sweep_[sweep_at_++];
    if (!connections_.count(c) || c->closing()) continue;
    c->on_tick(now_ms);
    if (c->closing()) ++closed;
  }
  const bool more = sweep_at_ < sweep_.size();
  if (!more) sweep_.clear();
  if (!sweep_idle_open_) {
    if (!more) return;
    uv_idle_init(loop_.loop(), &sweep_idle_);
    sweep_idle_.data = this;
    sweep_idle_open_ = true;
  }
  if (more) {
    uv_idle_start(&sweep_idle_, &RtmpService::on_sweep);
  } else {
    uv_idle_stop(&sweep_idle_);
  }
}

void RtmpService::on_sweep(uv_idle_t* idle) { static_cast<RtmpService*>(idle->data)->continue_sweep(); }

void RtmpService::end_publishers(const std::string& why) {
  for (RtmpConnection* c : snapshot()) {
    if (connections_.count(c)) c->end_publishers(why);
  }
}

void RtmpService::shutdown_gracefully() {
  for (RtmpConnection* c : snapshot()) {
    if (connections_.count(c)) c->shutdown_gracefully();
  }
}

void RtmpService::close_all(const std::string& why) {
  for (RtmpConnection* c : snapshot()) c->close(why);
}

void RtmpService::close_handles() {
  if (tls_) tls_->close();
  sweep_.clear();
  if (sweep_idle_open_) {
    sweep_idle_open_ = false;
    uv_close(reinterpret_cast<uv_handle_t*>(&sweep_idle_), nullptr);
  }
}

size_t RtmpService::request_reconnects() {
  size_t asked = 0;
  for (RtmpConnection* c : snapshot()) {
    if (connections_.count(c) && c->request_reconnect()) ++asked;
  }
  return asked;
}

void RtmpService::reload_tls(const char* why) {
  if (tls_) tls_->reload(why);
}

bool RtmpService::close_client(uint64_t id, const std::string& why) {
  for (RtmpConnection* c : connections_) {
    if (c->id() == id && !c->closing()) {
      c->close(why);
      return true;
    }
  }
  return false;
}

void RtmpService::close_publisher(const SessionPeer* publisher, const std::string& why) {
  for (RtmpConnection* c : connections_) {
    if (c == publisher) return c->close(why);
  }
}

std::optional<RtmpConnection::RecordControl> RtmpService::control_recording(const std::string& key, bool start) {
  for (RtmpConnection* c : connections_) {
    auto r = c->control_recording(key, start);
    if (r != RtmpConnection::RecordControl::NotPublishedHere) return r;
  }
  return std::nullopt;
}

}  // namespace sluice::server
