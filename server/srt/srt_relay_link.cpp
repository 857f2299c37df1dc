#include "server/srt/srt_relay_link.hpp"

#include <cstring>

#include "server/io/logging.hpp"
#include "server/srt/srt_socket.hpp"

namespace sluice::server {

namespace {

// A lookup under way outlives a link closed meanwhile: the callback then only frees it.
struct Resolve {
  uv_getaddrinfo_t req{};
  SrtRelayLink* link = nullptr;
};
}  // namespace

SrtRelayLink::SrtRelayLink(SrtService& service, LoopContext& loop, uint64_t id, Settings settings, Owner* owner)
    : SrtTsOutput(loop), service_(service), id_(id), settings_(std::move(settings)), owner_(owner) {
  const RelayUrl& u = settings_.url;
  peer_ = (u.host.find(':') != std::string::npos ? "[" + u.host + "]" : u.host) + ":" + std::to_string(u.port);
}

SrtRelayLink::~SrtRelayLink() = default;

void SrtRelayLink::start() {
  started_ms_ = last_receive_ms_ = loop_.now_ms();
  auto* r = new Resolve;
  r->link = this;
  r->req.data = r;
  resolving_ = &r->req;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  const std::string port = std::to_string(settings_.url.port);
  const int rc = uv_getaddrinfo(loop_.loop(), &r->req, &SrtRelayLink::on_resolved, settings_.url.host.c_str(),
                                port.c_str(), &hints);
  if (rc != 0) {
    resolving_ = nullptr;
    delete r;
    close(std::string("resolve failed: ") + uv_strerror(rc));
  }
}

void SrtRelayLink::on_resolved(uv_getaddrinfo_t* req, int status, addrinfo* res) {
  auto* r = static_cast<Resolve*>(req->data);
  SrtRelayLink* self = r->link;
  delete r;
  if (self == nullptr) {
    uv_freeaddrinfo(res);
    return;
  }
  self->resolving_ = nullptr;
  if (status < 0 || res == nullptr) {
    uv_freeaddrinfo(res);
    return self->close(std::string("resolve failed: ") + uv_strerror(status));
  }
  sockaddr_storage addr{};
  memcpy(&addr, res->ai_addr, res->ai_addrlen);
  uv_freeaddrinfo(res);
  self->connect(reinterpret_cast<const sockaddr*>(&addr));
}

void SrtRelayLink::connect(const sockaddr* addr) {
  if (service_.poller() == nullptr) return close("libsrt could not start");
  socket_ = srt_create_socket();
  if (socket_ == SRT_INVALID_SOCK) return close(srt_error("srt_create_socket"));
  config::SrtConfig c = loop_.config().srt;
  const RelayUrl& u = settings_.url;
  if (u.latency_ms != 0) c.latency = std::chrono::milliseconds(u.latency_ms);
  if (!u.passphrase.empty()) c.passphrase.value = u.passphrase;
  if (u.pbkeylen != 0) c.pbkeylen = u.pbkeylen;
  if (auto r = apply_srt_options(socket_, c); !r) return close(r.error().context);
  const std::string& sid = settings_.stream_name;
  if (srt_setsockflag(socket_, SRTO_STREAMID, sid.data(), static_cast<int>(sid.size())) != 0) {
    return close(srt_error("srt_setsockflag streamid"));
  }
  service_.track(socket_, this);
  watch(SRT_EPOLL_OUT | SRT_EPOLL_ERR);
  const int len = addr->sa_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
  // Non-blocking: the answer comes as writable (connected) or as an error (refused, timed out).
  if (srt_connect(socket_, addr, len) == SRT_ERROR) return close(srt_error("srt_connect"));
}

void SrtRelayLink::watch(int events) {
  if (!closed_ && socket_ != SRT_INVALID_SOCK) service_.poller()->watch(socket_, events);
}

void SrtRelayLink::on_ready(int events) {
  if (closed_) return;
  if (events & SRT_EPOLL_ERR) {
    if (!live_) {
      const int why = srt_getrejectreason(socket_);
      return close(std::string("connect refused: ") + srt_rejectreason_str(why) +
                   (why >= SRT_REJC_PREDEFINED ? " (" + std::to_string(why) + ")" : ""));
    }
    return close(srt_getsockstate(socket_) == SRTS_BROKEN ? "connection broken" : "closed by peer");
  }
  if (!live_ && (events & SRT_EPOLL_OUT) && srt_getsockstate(socket_) == SRTS_CONNECTED) go_live();
  if (closed_) return;
  if ((events & SRT_EPOLL_IN) && settings_.role == Role::Pull) receive();
  if (closed_) return;
  if (events & SRT_EPOLL_OUT) on_writable();
}

void SrtRelayLink::go_live() {
  live_ = true;
  last_receive_ms_ = loop_.now_ms();
  watch(SRT_EPOLL_IN | SRT_EPOLL_ERR);
  if (settings_.role == Role::Push && settings_.hub && settings_.registry && settings_.queue) {
    reader_ =
        std::make_unique<SrtReader>(*this, *settings_.registry, settings_.source_key, *settings_.hub, *settings_.queue);
    request_flush();
  }
  if (owner_) owner_->relay_live(*this);
  if (!closed_ && settings_.role == Role::Pull) receive();  // what came with the connection
}

void SrtRelayLink::receive() {
  std::string error;
  const SrtTsReceiver::Outcome got = receiver_.receive(
      socket_,
      [this](media::ts::TsDemuxer::Frame& f) {
        if (!owner_ || closed_) return false;
        protocol::Message m;
        m.type = f.type;
        m.timestamp = f.timestamp;
        m.payload = Slice::adopt(std::move(f.body));
        owner_->relay_media(*this, m);
        return !closed_;
      },
      error);
  if (receiver_.bytes() > 0) last_receive_ms_ = loop_.now_ms();
  if (got == SrtTsReceiver::Outcome::Closed || got == SrtTsReceiver::Outcome::Bad) close(error);
}

void SrtRelayLink::watch_output(bool writable) {
  watch(SRT_EPOLL_IN | SRT_EPOLL_ERR | (writable ? static_cast<int>(SRT_EPOLL_OUT) : 0));
}

void SrtRelayLink::detach(const std::string& why, Owner* drain) {
  // MPEG-TS has no end to send: the target sees the connection close, after the frames already
  // handed to libsrt (which sends them within the latency).
  (void)drain;
  owner_ = nullptr;
  close(why);
}

void SrtRelayLink::on_tick(uint64_t now_ms) {
  if (closed_) return;
  if (!live_ && now_ms - started_ms_ > settings_.setup_timeout_ms) return close("connection timeout");
  if (live_ && settings_.role == Role::Pull && now_ms - last_receive_ms_ > settings_.idle_timeout_ms) {
    close("upstream sent nothing for " + std::to_string(settings_.idle_timeout_ms / 1000) + "s");
  }
}

void SrtRelayLink::close(const std::string& reason) {
  if (closed_) return;
  closed_ = true;
  if (resolving_ != nullptr) static_cast<Resolve*>(resolving_->data)->link = nullptr;
  resolving_ = nullptr;
  reader_.reset();
  loop_.flush().cancel(this);
  if (socket_ != SRT_INVALID_SOCK) {
    service_.untrack(socket_);
    if (SrtPoller* p = service_.poller()) p->unwatch(socket_);
    srt_close(socket_);
  }
  if (Owner* o = std::exchange(owner_, nullptr)) o->relay_closed(*this, reason);
  service_.retire(this);
}

}  // namespace sluice::server
