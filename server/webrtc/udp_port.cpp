#include "server/webrtc/udp_port.hpp"

#include <netinet/in.h>
#include <netinet/udp.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "server/io/uv_handle.hpp"

namespace sluice::server {

namespace {
// One datagram at a time, handled before the next read: one buffer for the port.
thread_local uint8_t t_buffer[UdpPort::kMaxDatagram];

socklen_t address_length(const sockaddr_storage& a) {
  return a.ss_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
}

bool same_peer(const sockaddr_storage& a, const sockaddr_storage& b) {
  return a.ss_family == b.ss_family && std::memcmp(&a, &b, address_length(a)) == 0;
}

// What a kernel or device says when it cannot take a GSO message (no UDP_SEGMENT, no checksum
// offload on the route's device, a segment over the route's MTU).
bool gso_refused(int error) { return error == EIO || error == EINVAL || error == EOPNOTSUPP || error == EMSGSIZE; }
}  // namespace

UdpPort::UdpPort(uv_loop_t* loop, OnDatagram on_datagram) : loop_(loop), on_datagram_(std::move(on_datagram)) {
  if (const char* batch = std::getenv("SLUICE_WEBRTC_BATCH")) {
    batch_ = std::clamp<size_t>(std::strtoul(batch, nullptr, 10), 1, kBatch);
  }
  if (const char* gso = std::getenv("SLUICE_WEBRTC_GSO")) gso_ = std::strcmp(gso, "0") != 0;
}

UdpPeer UdpPeer::from(const sockaddr* address) {
  UdpPeer p;
  if (address->sa_family == AF_INET) {
    std::memcpy(&p.address, address, sizeof(sockaddr_in));
    const auto* in = reinterpret_cast<const sockaddr_in*>(address);
    p.endpoint.address =
        protocol::IpAddress::from_v4(std::span<const uint8_t, 4>(reinterpret_cast<const uint8_t*>(&in->sin_addr), 4));
    p.endpoint.port = ntohs(in->sin_port);
  } else if (address->sa_family == AF_INET6) {
    std::memcpy(&p.address, address, sizeof(sockaddr_in6));
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(address);
    p.endpoint.address = protocol::IpAddress::from_v6(
        std::span<const uint8_t, 16>(reinterpret_cast<const uint8_t*>(&in6->sin6_addr), 16));
    p.endpoint.port = ntohs(in6->sin6_port);
  }
  return p;
}

Result<uint16_t> UdpPort::open(const std::string& host, uint16_t port) {
  sockaddr_storage ss{};
  const bool v6 = host.find(':') != std::string::npos;
  int rc = v6 ? uv_ip6_addr(host.c_str(), port, reinterpret_cast<sockaddr_in6*>(&ss))
              : uv_ip4_addr(host.c_str(), port, reinterpret_cast<sockaddr_in*>(&ss));
  if (rc != 0) return Error(Errc::Config, "webrtc: bad address " + host + ": " + uv_strerror(rc));
  uv_udp_init(loop_, &udp_);
  udp_.data = this;
  open_ = true;
  rc = uv_udp_bind(&udp_, reinterpret_cast<const sockaddr*>(&ss), v6 ? UV_UDP_IPV6ONLY : 0);
  if (rc != 0) {
    return Error(Errc::Io, "webrtc: cannot bind udp " + host + ":" + std::to_string(port) + ": " + uv_strerror(rc));
  }
  // Room for bursts: a keyframe to many players leaves in one loop turn.
  int size = 4 << 20;
  uv_send_buffer_size(reinterpret_cast<uv_handle_t*>(&udp_), &size);
  size = 4 << 20;
  uv_recv_buffer_size(reinterpret_cast<uv_handle_t*>(&udp_), &size);
  sockaddr_storage bound{};
  int len = sizeof bound;
  uv_udp_getsockname(&udp_, reinterpret_cast<sockaddr*>(&bound), &len);
  rc = uv_udp_recv_start(&udp_, &UdpPort::on_alloc, &UdpPort::on_recv);
  if (rc != 0) return Error(Errc::Io, std::string("webrtc: uv_udp_recv_start: ") + uv_strerror(rc));
  uv_os_fd_t fd = -1;
  if (uv_fileno(reinterpret_cast<const uv_handle_t*>(&udp_), &fd) != 0) return Error(Errc::Io, "webrtc: no socket");
  fd_ = fd;
  uv_prepare_init(loop_, &before_poll_);
  before_poll_.data = this;
  uv_prepare_start(&before_poll_, [](uv_prepare_t* h) { static_cast<UdpPort*>(h->data)->flush(); });
  uv_check_init(loop_, &after_poll_);
  after_poll_.data = this;
  uv_check_start(&after_poll_, [](uv_check_t* h) { static_cast<UdpPort*>(h->data)->flush(); });
  return UdpPeer::from(reinterpret_cast<const sockaddr*>(&bound)).endpoint.port;
}

bool UdpPort::send(std::span<const uint8_t> datagram, const UdpPeer& to) {
  if (!open_ || fd_ < 0 || datagram.size() > kMaxDatagram) {
    ++send_drops_;
    return false;
  }
  const size_t i = queued_++;
  std::memcpy(data_[i], datagram.data(), datagram.size());
  iov_[i] = iovec{data_[i], datagram.size()};
  to_[i] = to.address;
  if (queued_ >= batch_) flush();
  return true;
}

size_t UdpPort::build_messages() {
  size_t messages = 0;
  for (size_t first = 0; first < queued_; ++messages) {
    const size_t segment = iov_[first].iov_len;
    size_t count = 1, bytes = segment;
    // Only the last segment may be shorter: a run ends after one.
    while (gso_ && first + count < queued_ && iov_[first + count - 1].iov_len == segment) {
      const size_t next = iov_[first + count].iov_len;
      if (next > segment || bytes + next > kMaxGsoBytes || !same_peer(to_[first], to_[first + count])) break;
      bytes += next;
      ++count;
    }
    mmsghdr& m = msgs_[messages];
    m = mmsghdr{};
    m.msg_hdr.msg_name = &to_[first];
    m.msg_hdr.msg_namelen = address_length(to_[first]);
    m.msg_hdr.msg_iov = &iov_[first];
    m.msg_hdr.msg_iovlen = count;
    if (count > 1) {
      m.msg_hdr.msg_control = control_[messages];
      m.msg_hdr.msg_controllen = sizeof control_[messages];
      cmsghdr* c = CMSG_FIRSTHDR(&m.msg_hdr);
      c->cmsg_level = SOL_UDP;
      c->cmsg_type = UDP_SEGMENT;
      c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
      const auto size = static_cast<uint16_t>(segment);
      std::memcpy(CMSG_DATA(c), &size, sizeof size);
    }
    segments_[messages] = count;
    first += count;
  }
  return messages;
}

void UdpPort::flush() {
  const size_t messages = build_messages();
  size_t sent = 0;
  while (sent < messages) {
    ++send_calls_;
    const int n = ::sendmmsg(fd_, msgs_ + sent, static_cast<unsigned>(messages - sent), MSG_DONTWAIT);
    if (n > 0) {
      for (const size_t end = sent + static_cast<size_t>(n); sent < end; ++sent) {
        out_ += segments_[sent];
        gso_messages_ += segments_[sent] > 1 ? 1 : 0;
      }
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS)) {
      for (; sent < messages; ++sent) send_drops_ += segments_[sent];  // the buffer is full: the rest would fail too
      break;
    }
    // This one message (an address the kernel refuses, or GSO it cannot do): the others go on.
    if (segments_[sent] > 1 && gso_refused(errno)) gso_ = false;
    send_drops_ += segments_[sent];
    ++sent;
  }
  queued_ = 0;
}

void UdpPort::close() {
  if (!open_) return;
  flush();
  open_ = false;
  uv_udp_recv_stop(&udp_);
  close_handle(&udp_);
  if (fd_ >= 0) {
    close_handle(&before_poll_);
    close_handle(&after_poll_);
  }
  fd_ = -1;
}

void UdpPort::on_alloc(uv_handle_t*, size_t, uv_buf_t* buf) {
  *buf = uv_buf_init(reinterpret_cast<char*>(t_buffer), kMaxDatagram);
}

void UdpPort::on_recv(uv_udp_t* h, ssize_t n, const uv_buf_t* buf, const sockaddr* from, unsigned flags) {
  auto* self = static_cast<UdpPort*>(h->data);
  // n == 0 with no address: nothing more to read now; truncated datagrams are nobody's media.
  if (n <= 0 || from == nullptr || (flags & UV_UDP_PARTIAL) != 0) return;
  ++self->in_;
  self->on_datagram_({reinterpret_cast<const uint8_t*>(buf->base), static_cast<size_t>(n)}, UdpPeer::from(from));
}

}  // namespace sluice::server
