#include "server/srt/srt_service.hpp"

#include <atomic>
#include <chrono>
#include <mutex>

#include "server/access/gate.hpp"
#include "server/io/accept_policy.hpp"
#include "server/io/guard_counters.hpp"
#include "server/io/logging.hpp"
#include "server/io/uv_handle.hpp"
#include "server/srt/srt_connection.hpp"
#include "server/srt/srt_handshake.hpp"
#include "server/srt/srt_relay_link.hpp"
#include "server/srt/srt_socket.hpp"

namespace sluice::server {

namespace {
constexpr int kBacklog = 128;
constexpr uint64_t kMinSocketLifeMs = 100;  // see on_reap
std::atomic<size_t> g_connections{0};

// Refusals in the handshake are logged from libsrt's thread, at most once a second in all.
std::mutex g_reject_log_mutex;
LogRateLimit g_reject_log;

uint64_t steady_ms() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

}  // namespace

size_t SrtService::total_connections() { return g_connections.load(std::memory_order_relaxed); }

SrtService::SrtService(PublishServices& services, WorkerMesh* mesh, uint32_t worker,
                       std::function<size_t()> open_connections)
    : services_(services), mesh_(mesh), worker_(worker), open_connections_(std::move(open_connections)) {}

SrtService::~SrtService() { stop(); }

Result<void> SrtService::start() {
  uv_timer_init(services_.loop.loop(), &reap_);
  reap_.data = this;
  started_ = true;
  return {};
}

SrtPoller* SrtService::poller() {
  if (poller_ || poller_failed_ || !started_) return poller_.get();
  route_srt_logs();
  poller_ = std::make_unique<SrtPoller>(services_.loop.loop(), [this](const SrtPoller::Ready& r) { on_ready(r); });
  if (auto r = poller_->start(); !r) {
    SLUICE_LOG_ERROR("event=srt_unavailable reason=\"{}\"", r.error().context);
    poller_.reset();
    poller_failed_ = true;
  }
  return poller_.get();
}

Result<void> SrtService::listen(std::vector<std::string>& bound) {
  const config::SrtConfig& c = services_.loop.config().srt;
  if (c.listen.empty()) return {};
  if (poller() == nullptr) return Error(Errc::Io, "srt.listen: libsrt could not start");
  for (const config::ListenAddress& addr : c.listen) {
    sockaddr_storage ss{};
    const int bad = addr.is_ipv6() ? uv_ip6_addr(addr.host.c_str(), addr.port, reinterpret_cast<sockaddr_in6*>(&ss))
                                   : uv_ip4_addr(addr.host.c_str(), addr.port, reinterpret_cast<sockaddr_in*>(&ss));
    if (bad != 0) return Error(Errc::Io, "srt.listen " + addr.to_string() + ": not an address");
    const SRTSOCKET s = srt_create_socket();
    if (s == SRT_INVALID_SOCK) return Error(Errc::Io, srt_error("srt_create_socket"));
    listeners_.push_back(s);
    if (auto r = apply_srt_options(s, c); !r)
      return Error(Errc::Io, "srt.listen " + addr.to_string() + ": " + r.error().context);
    const int len = addr.is_ipv6() ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
    if (srt_bind(s, reinterpret_cast<const sockaddr*>(&ss), len) != 0 ||
        srt_listen_callback(s, &SrtService::on_listen, this) != 0 || srt_listen(s, kBacklog) != 0) {
      return Error(Errc::Io, "srt.listen " + addr.to_string() + ": " + srt_getlasterror_str());
    }
    sockaddr_storage got{};
    int got_len = sizeof got;
    srt_getsockname(s, reinterpret_cast<sockaddr*>(&got), &got_len);
    const std::string where = format_sockaddr(got);
    poller_->watch(s, SRT_EPOLL_IN | SRT_EPOLL_ERR);
    bound.push_back("srt udp " + where);
    SLUICE_LOG_INFO("event=srt_listening address={} latency_ms={} encrypted={}", where, c.latency.count(),
                    c.passphrase.value.empty() ? "no" : "yes");
  }
  return {};
}

// libsrt's thread, inside the caller's handshake: only the configuration is read.
int SrtService::on_listen(void* opaque, SRTSOCKET ns, int, const sockaddr* peer, const char* stream_id) {
  auto* self = static_cast<SrtService*>(opaque);
  sockaddr_storage ss{};
  if (peer) memcpy(&ss, peer, peer->sa_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in));
  const PeerAddress caller = peer_address_of(ss);  // no address for another family: the rules see none
  // Its own hold of the snapshot: a reload on the loop may swap the loop's meanwhile.
  const config::ConfigSnapshot config = self->services_.loop.snapshot_from_any_thread();
  SrtVerdict v = judge_srt_caller(*config, stream_id ? stream_id : "", caller.raw, unix_now());
  if (v.reject == 0) {
    if (v.latency) set_srt_latency(ns, *v.latency);
    if (v.passphrase) set_srt_passphrase(ns, *v.passphrase);
    return 0;
  }
  srt_setrejectreason(ns, v.reject);
  GuardCounters::bump(GuardEvent::SrtRejected);
  std::lock_guard<std::mutex> lock(g_reject_log_mutex);
  uint64_t suppressed = 0;
  if (g_reject_log.allow(steady_ms(), suppressed)) {
    SLUICE_LOG_WARN("peer={} event=srt_rejected stream_id=\"{}\" code={} reason=\"{}\" suppressed={}", caller.text,
                    printable(stream_id ? stream_id : ""), v.reject, v.reason, suppressed);
  }
  return -1;
}

void SrtService::on_ready(const SrtPoller::Ready& r) {
  if (std::find(listeners_.begin(), listeners_.end(), r.socket) != listeners_.end()) return accept_all(r.socket);
  auto it = owners_.find(r.socket);
  if (it != owners_.end()) it->second->on_ready(r.events);
}

void SrtService::accept_all(SRTSOCKET listener) {
  const config::Config& cfg = services_.loop.config();
  for (;;) {
    sockaddr_storage ss{};
    int len = sizeof ss;
    const SRTSOCKET s = srt_accept(listener, reinterpret_cast<sockaddr*>(&ss), &len);
    if (s == SRT_INVALID_SOCK) return;  // SRT_EASYNCRCV: nothing more (anything else: the listener's state)
    const uint64_t id = LoopContext::next_connection_id();
    if (stopping_ || AdmissionPolicy::full(open_connections_(), cfg.rtmp.max_connections)) {
      GuardCounters::bump(GuardEvent::ConnectionLimit);
      SLUICE_LOG_WARN("conn={} peer={} event=srt_refused reason=\"{}\"", id, format_sockaddr(ss),
                      stopping_ ? "server is stopping" : "rtmp.max_connections reached");
      close_later(s);
      continue;
    }
    g_connections.fetch_add(1, std::memory_order_relaxed);
    uint32_t to = worker_;
    if (mesh_ && mesh_->size() > 1) {
      to = next_worker_;
      next_worker_ = (next_worker_ + 1) % static_cast<uint32_t>(mesh_->size());
    }
    if (to == worker_) {
      adopt(s, id);
      continue;
    }
    auto e = std::make_unique<MeshEvent>();
    e->kind = MeshEvent::Kind::SrtAccept;
    e->from = worker_;
    e->fd = s;
    e->id = id;
    mesh_->post(to, std::move(e));
  }
}

void SrtService::adopt(SRTSOCKET s, uint64_t id) {
  if (!started_ || stopping_ || poller() == nullptr) {
    srt_close(s);
    g_connections.fetch_sub(1, std::memory_order_relaxed);
    return;
  }
  auto* c = new SrtConnection(*this, services_, s, id);
  connections_[s] = c;
  owners_[s] = c;
  c->open();
}

void SrtService::retire(SrtConnection* c) {
  connections_.erase(c->socket());
  owners_.erase(c->socket());
  g_connections.fetch_sub(1, std::memory_order_relaxed);
  retired_.push_back(c);
  reap_soon();
}

void SrtService::retire(SrtRelayLink* l) {
  std::erase(links_, l);
  retired_links_.push_back(l);
  reap_soon();
}

// Deleted on a later turn of the loop: a close may run inside the object's own calls.
void SrtService::reap_soon(uint64_t delay_ms) {
  if (started_) uv_timer_start(&reap_, &SrtService::on_reap, delay_ms, 0);
}

// An accepted socket is closed (its connection deleted) no sooner than kMinSocketLifeMs after its
// accept: libsrt 1.5 reports the accept before the caller has the handshake's last answer, and a
// close that reaches the caller before that answer is lost on it: the caller then believes it is
// connected until its peer idle timeout (5 s), for about half of the connections refused at once
// (a hook's or a limit's refusal). A few tens of ms are enough; the socket is watched no more.
void SrtService::close_later(SRTSOCKET s) {
  refused_.emplace_back(s, services_.loop.now_ms() + kMinSocketLifeMs);
  reap_soon(kMinSocketLifeMs);
}

void SrtService::on_reap(uv_timer_t* t) {
  auto* self = static_cast<SrtService*>(t->data);
  const uint64_t now = self->services_.loop.now_ms();
  std::vector<SrtConnection*> waiting;
  uint64_t next_ms = 0;
  std::vector<SrtConnection*> dead;
  dead.swap(self->retired_);
  for (SrtConnection* c : dead) {
    const uint64_t due = c->started_ms() + kMinSocketLifeMs;
    if (due <= now) {
      delete c;
      continue;
    }
    waiting.push_back(c);
    next_ms = next_ms == 0 ? due - now : std::min(next_ms, due - now);
  }
  self->retired_ = std::move(waiting);
  std::vector<std::pair<SRTSOCKET, uint64_t>> sockets;
  sockets.swap(self->refused_);
  for (const auto& [sock, due] : sockets) {
    if (due <= now) {
      srt_close(sock);
      continue;
    }
    self->refused_.emplace_back(sock, due);
    next_ms = next_ms == 0 ? due - now : std::min(next_ms, due - now);
  }
  std::vector<SrtRelayLink*> dead_links;
  dead_links.swap(self->retired_links_);
  for (SrtRelayLink* l : dead_links) delete l;
  if (next_ms != 0) self->reap_soon(next_ms);
}

RelayLink* SrtService::make_link(uint64_t id, RelayLink::Settings settings, RelayLink::Owner* owner) {
  if (!started_ || stopping_) return nullptr;
  auto* l = new SrtRelayLink(*this, services_.loop, id, std::move(settings), owner);
  links_.push_back(l);
  return l;
}

void SrtService::end_publishers(const std::string& why) {
  stopping_ = true;
  for (auto& [s, c] : connections_) c->end_publishing(why);
}

void SrtService::close_all(const std::string& why) {
  stopping_ = true;
  std::vector<SrtConnection*> all;
  for (auto& [s, c] : connections_) all.push_back(c);
  for (SrtConnection* c : all) c->close(why);
}

bool SrtService::close_client(uint64_t id, const std::string& why) {
  for (auto& [s, c] : connections_) {
    if (c->id() == id) {
      c->close(why);
      return true;
    }
  }
  return false;
}

void SrtService::close_publisher(const SessionPeer* publisher, const std::string& why) {
  for (auto& [s, c] : connections_) {
    if (static_cast<const SessionPeer*>(c) == publisher) return c->close(why);
  }
}

void SrtService::stop_listening() {
  for (SRTSOCKET s : listeners_) {
    if (poller_) poller_->unwatch(s);
    srt_close(s);
  }
  listeners_.clear();
}

void SrtService::stop() {
  if (!started_) return;
  close_all("server is stopping");
  std::vector<SrtRelayLink*> links = links_;
  for (SrtRelayLink* l : links) l->close_link("server is stopping");
  started_ = false;
  for (SRTSOCKET s : listeners_) srt_close(s);
  listeners_.clear();
  if (poller_) poller_->stop();
  uv_timer_stop(&reap_);
  for (SrtConnection* c : retired_) delete c;
  retired_.clear();
  for (SrtRelayLink* l : retired_links_) delete l;
  retired_links_.clear();
  for (const auto& [sock, due] : refused_) srt_close(sock);
  refused_.clear();
  close_handle(&reap_);
}

}  // namespace sluice::server
