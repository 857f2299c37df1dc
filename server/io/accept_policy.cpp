#include "server/io/accept_policy.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "server/io/logging.hpp"

namespace sluice::server {

namespace {

int open_spare() { return ::open("/dev/null", O_RDONLY | O_CLOEXEC); }

bool out_of_descriptors(int err) { return err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM; }

}  // namespace

DescriptorReserve::DescriptorReserve(size_t spares) : wanted_(spares) {
  std::lock_guard lock(mutex_);
  refill_locked();
}

DescriptorReserve::~DescriptorReserve() {
  for (int fd : spares_) ::close(fd);
}

DescriptorReserve& DescriptorReserve::process() {
  static DescriptorReserve reserve;
  return reserve;
}

size_t DescriptorReserve::spares() const {
  std::lock_guard lock(mutex_);
  return spares_.size();
}

void DescriptorReserve::refill_locked() {
  while (spares_.size() < wanted_) {
    const int fd = open_spare();
    if (fd < 0) return;
    spares_.push_back(fd);
  }
}

DescriptorReserve::Result DescriptorReserve::accept(int listen_fd, sockaddr_storage& peer) {
  std::lock_guard lock(mutex_);
  for (;;) {
    socklen_t len = sizeof peer;
    const int fd = ::accept4(listen_fd, reinterpret_cast<sockaddr*>(&peer), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) {
      // A spare spent earlier (or lost to another open) comes back while there is room.
      if (spares_.size() < wanted_) refill_locked();
      return {Outcome::Accepted, fd};
    }
    const int err = errno;
    if (err == EINTR || err == ECONNABORTED) continue;
    if (err == EAGAIN || err == EWOULDBLOCK) return {Outcome::NothingPending};
    if (out_of_descriptors(err)) return refuse_locked(listen_fd, err);
    return {Outcome::Failed, -1, err};
  }
}

DescriptorReserve::Result DescriptorReserve::refuse_locked(int listen_fd, int error) {
  refill_locked();
  if (spares_.empty()) return {Outcome::NoRoom, -1, error};
  ::close(spares_.back());
  spares_.pop_back();
  const int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
  const int err = errno;
  if (fd >= 0) ::close(fd);
  refill_locked();
  if (fd >= 0) return {Outcome::Refused, -1, error};
  if (err == EAGAIN || err == EWOULDBLOCK) return {Outcome::NothingPending};
  // Another open took the room between the close and the accept.
  return {Outcome::NoRoom, -1, error};
}

std::string AdmissionPolicy::over_limit(size_t open, uint32_t max) const {
  if (!full(open, max)) return {};
  GuardCounters::bump(GuardEvent::ConnectionLimit);
  return "too many connections (limits.connections=" + std::to_string(max) + ")";
}

void AdmissionPolicy::per_ip_refused(uint64_t id, std::string_view peer, uint32_t per_ip, uint64_t now_ms) {
  GuardCounters::bump(GuardEvent::PerIpLimit);
  uint64_t suppressed = 0;
  if (!per_ip_log_.allow(now_ms, suppressed)) return;
  SLUICE_LOG_WARN("conn={} proto={} peer={} event=connection_refused reason=\"limits.per_ip={}\" suppressed={}", id,
                  proto_, peer, per_ip, suppressed);
}

}  // namespace sluice::server
