#include "server/io/listener.hpp"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>

#include "server/io/logging.hpp"
#include "server/io/net_address.hpp"
#include "server/io/uv_handle.hpp"

namespace sluice::server {

namespace {
constexpr int kListenBacklog = 1024;
}  // namespace

TcpListener::TcpListener(uv_loop_t* loop, const char* proto, uint32_t accepts_per_iteration, OnAccepted on_accepted,
                         DescriptorReserve& reserve)
    : loop_(loop),
      reserve_(reserve),
      proto_(proto),
      accepts_per_iteration_(accepts_per_iteration == 0 ? 1 : accepts_per_iteration),
      on_accepted_(std::move(on_accepted)) {
  poll_.data = this;
  pause_timer_.data = this;
}

TcpListener::~TcpListener() = default;

Result<void> TcpListener::listen(const config::ListenAddress& addr, Sharing sharing) {
  // The RTMP side's messages predate the HTTP side and name no protocol.
  const bool rtmp = std::string_view(proto_) == "rtmp";
  sockaddr_storage ss{};
  int rc = addr.is_ipv6() ? uv_ip6_addr(addr.host.c_str(), addr.port, reinterpret_cast<sockaddr_in6*>(&ss))
                          : uv_ip4_addr(addr.host.c_str(), addr.port, reinterpret_cast<sockaddr_in*>(&ss));
  if (rc != 0) {
    return Error(Errc::Config,
                 std::string(rtmp ? "bad listen address " : "bad http listen address ") + addr.to_string());
  }
  auto fail = [&](int err) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    return Error(Errc::Io, "cannot listen on " + addr.to_string() + (rtmp ? "" : " (" + std::string(proto_) + ")") +
                               ": " + std::strerror(err));
  };
  const socklen_t len = addr.is_ipv6() ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
  int one = 1;
  // Where an IPv4 or IPv6 address keeps its port (network order).
  auto port_of = [&](sockaddr_storage& s) -> in_port_t& {
    return addr.is_ipv6() ? reinterpret_cast<sockaddr_in6*>(&s)->sin6_port
                          : reinterpret_cast<sockaddr_in*>(&s)->sin_port;
  };
  auto open_socket = [&](bool reuse_port) {
    int fd = ::socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return fd;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (reuse_port) ::setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
    if (addr.is_ipv6()) ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    return fd;
  };
  if (sharing == Sharing::FirstOfGroup) {
    // The plain bind says whether the address is free (and which port 0 becomes); the group's
    // sockets then take that port.
    fd_ = open_socket(false);
    if (fd_ < 0) return fail(errno);
    if (::bind(fd_, reinterpret_cast<const sockaddr*>(&ss), len) != 0) return fail(errno);
    sockaddr_storage probe{};
    socklen_t probe_len = sizeof probe;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&probe), &probe_len);
    ::close(fd_);
    fd_ = -1;
    port_of(ss) = port_of(probe);
  }
  fd_ = open_socket(sharing != Sharing::Alone);
  if (fd_ < 0) return fail(errno);
  if (::bind(fd_, reinterpret_cast<const sockaddr*>(&ss), len) != 0) return fail(errno);
  if (::listen(fd_, kListenBacklog) != 0) return fail(errno);
  rc = uv_poll_init_socket(loop_, &poll_, fd_);
  if (rc != 0) return fail(-rc);
  uv_timer_init(loop_, &pause_timer_);
  polling_ = true;
  rc = uv_poll_start(&poll_, UV_READABLE, &TcpListener::on_readable);
  if (rc != 0) {
    close();
    return fail(-rc);
  }
  sockaddr_storage bound{};
  socklen_t bound_len = sizeof bound;
  ::getsockname(fd_, reinterpret_cast<sockaddr*>(&bound), &bound_len);
  bound_ = format_sockaddr(bound);
  bound_listen_ = addr;
  bound_listen_.port = ntohs(port_of(bound));
  SLUICE_LOG_INFO("event=listen proto={} address={}", proto_, bound_);
  return ok();
}

void TcpListener::on_readable(uv_poll_t* poll, int status, int) {
  auto* self = owner_of<TcpListener>(poll);
  if (status < 0) {
    SLUICE_LOG_WARN("event=accept_error proto={} error=\"{}\"", self->proto_, uv_strerror(status));
    return;
  }
  self->accept_some();
}

void TcpListener::accept_some() {
  // Level-triggered: what is left pending makes the socket readable again next iteration.
  for (uint32_t i = 0; i < accepts_per_iteration_ && fd_ >= 0; ++i) {
    sockaddr_storage peer{};
    const DescriptorReserve::Result r = reserve_.accept(fd_, peer);
    switch (r.outcome) {
      case DescriptorReserve::Outcome::Accepted: on_accepted_(r.fd, peer); continue;
      case DescriptorReserve::Outcome::NothingPending: return;
      case DescriptorReserve::Outcome::Refused:
        // Counted once per connection closed, not per attempt: a connection that waits in the
        // backlog over several iterations is one refusal.
        GuardCounters::bump(GuardEvent::AcceptRefused);
        log_refused(r.error, "closed");
        continue;
      case DescriptorReserve::Outcome::NoRoom: log_refused(r.error, "left waiting"); return pause();
      case DescriptorReserve::Outcome::Failed:
        SLUICE_LOG_WARN("event=accept_error proto={} error=\"{}\"", proto_, std::strerror(r.error));
        return;
    }
  }
}

void TcpListener::pause() {
  if (!polling_ || paused_) return;
  paused_ = true;
  uv_poll_stop(&poll_);
  uv_timer_start(
      &pause_timer_,
      [](uv_timer_t* t) {
        auto* self = owner_of<TcpListener>(t);
        self->paused_ = false;
        if (self->polling_) uv_poll_start(&self->poll_, UV_READABLE, &TcpListener::on_readable);
      },
      DescriptorReserve::kPauseMs, 0);
}

void TcpListener::log_refused(int err, const char* what) {
  if (!refused_log_.allow(uv_now(loop_), refused_suppressed_)) return;
  SLUICE_LOG_WARN("event=accept_refused proto={} error=\"{}\" connection={} refused_since_last_line={}", proto_,
                  std::strerror(err), what, refused_suppressed_);
}

void TcpListener::close() {
  if (polling_) {
    uv_poll_stop(&poll_);
    close_handle(&poll_);
    close_handle(&pause_timer_);
    polling_ = false;
  }
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
}

}  // namespace sluice::server
