#include "server/io/proxy_header_reader.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "protocol/proxy_header.hpp"
#include "server/io/logging.hpp"
#include "server/io/uv_handle.hpp"

namespace sluice::server {

namespace {
// One peek holds the longest header the parser accepts (a v2 header with a 1 KiB body), so a
// header that has fully arrived is always read in one go.
constexpr size_t kPeekBytes = protocol::ProxyHeaderParser::kV2FixedSize + protocol::ProxyHeaderParser::kMaxV2Length;
constexpr std::chrono::milliseconds kMaxTimeout = std::chrono::seconds(5);

const char* kind_name(protocol::ProxyKind kind) {
  switch (kind) {
    case protocol::ProxyKind::Proxied: return "proxied";
    case protocol::ProxyKind::Local: return "local";
    case protocol::ProxyKind::Unspecified: return "unspecified";
  }
  return "?";
}

PeerAddress from_endpoint(const protocol::Endpoint& e) {
  auto raw = e.address.raw();
  return PeerAddress{e.to_string(), std::vector<uint8_t>(raw.begin(), raw.end())};
}
}  // namespace

struct ProxyHeaderReader::Pending {
  ProxyHeaderReader* owner = nullptr;  // null once the socket is handed on or closed
  uv_poll_t poll{};
  uv_timer_t timer{};
  int open_handles = 0;
  int fd = -1;
  uint64_t id = 0;
  const char* proto = "";
  bool tls = false;
  size_t header_bytes = 0;  // taken from the socket so far
  PeerAddress socket_peer;
  protocol::ProxyHeaderParser parser;

  static void on_readable(uv_poll_t* poll, int status, int events);
  static void on_timeout(uv_timer_t* timer);
  static void on_handle_closed(uv_handle_t* handle);
  void read_some();
  void succeed();
  // Closes the socket with the log line that says why (none when why is empty).
  void refuse(const std::string& why);
  // Stops waiting: the handles close (and this object goes with them); fd is left as it is.
  void detach();
};

ProxyHeaderReader::ProxyHeaderReader(uv_loop_t* loop, std::chrono::milliseconds timeout, OnReady on_ready)
    : loop_(loop), timeout_(timeout), on_ready_(std::move(on_ready)) {}

ProxyHeaderReader::~ProxyHeaderReader() {
  // The owner stops before it goes (close_all); whatever is left must not call back into it.
  for (Pending* p : pending_) p->owner = nullptr;
}

std::chrono::milliseconds ProxyHeaderReader::timeout_for(std::chrono::milliseconds handshake_timeout) {
  return std::max(std::chrono::milliseconds(1), std::min(kMaxTimeout, handshake_timeout / 2));
}

void ProxyHeaderReader::start(int fd, uint64_t id, const Family& family) {
  PeerAddress peer = socket_peer_address(fd);
  if (!config::cidr_list_allows(family.from, peer.raw)) {
    // Not a balancer: a direct client, whose first bytes are its own (docs/proxy_protocol.md). It
    // cannot choose its address: a header it sends is a bad RTMP handshake or HTTP request.
    SLUICE_LOG_DEBUG(
        "conn={} proto={} peer={} event=proxy_header_skipped reason=\"direct client (not in "
        "proxy_protocol_from)\"",
        id, family.proto, peer.text);
    on_ready_(fd, id, family.tls, std::move(peer));
    return;
  }
  auto* p = new Pending;
  p->fd = fd;
  p->id = id;
  p->proto = family.proto;
  p->tls = family.tls;
  p->socket_peer = std::move(peer);
  int rc = uv_poll_init_socket(loop_, &p->poll, fd);
  if (rc != 0) {
    SLUICE_LOG_WARN("conn={} proto={} peer={} event=accept_error error=\"{}\"", id, family.proto, p->socket_peer.text,
                    uv_strerror(rc));
    ::close(fd);
    delete p;
    return;
  }
  p->poll.data = p;
  uv_timer_init(loop_, &p->timer);
  p->timer.data = p;
  p->open_handles = 2;
  p->owner = this;
  pending_.insert(p);
  uv_timer_start(&p->timer, &Pending::on_timeout, static_cast<uint64_t>(timeout_.count()), 0);
  rc = uv_poll_start(&p->poll, UV_READABLE, &Pending::on_readable);
  if (rc != 0) p->refuse(std::string("cannot poll the socket: ") + uv_strerror(rc));
}

void ProxyHeaderReader::close_all() {
  std::vector<Pending*> all(pending_.begin(), pending_.end());
  for (Pending* p : all) p->refuse("");
}

void ProxyHeaderReader::finish(Pending* p) { pending_.erase(p); }

void ProxyHeaderReader::Pending::on_readable(uv_poll_t* poll, int status, int) {
  auto* self = owner_of<Pending>(poll);
  if (self->owner == nullptr) return;
  try {
    if (status < 0) return self->refuse(std::string("poll error: ") + uv_strerror(status));
    self->read_some();
  } catch (const std::exception& e) {
    self->refuse(std::string("internal error: ") + e.what());
  }
}

void ProxyHeaderReader::Pending::on_timeout(uv_timer_t* timer) {
  auto* self = owner_of<Pending>(timer);
  if (self->owner == nullptr) return;
  const auto ms = self->owner->timeout_.count();
  self->refuse(self->header_bytes == 0 ? "no PROXY header within " + std::to_string(ms) + " ms"
                                       : "PROXY header incomplete after " + std::to_string(ms) + " ms (" +
                                             std::to_string(self->header_bytes) + " bytes came)");
}

void ProxyHeaderReader::Pending::read_some() {
  uint8_t buf[kPeekBytes];
  ssize_t n;
  do {
    n = ::recv(fd, buf, sizeof buf, MSG_PEEK);
  } while (n < 0 && errno == EINTR);
  if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK) return;
    return refuse(std::string("read error: ") + std::strerror(errno));
  }
  if (n == 0) {
    return refuse(header_bytes == 0 ? "the peer closed before sending a PROXY header"
                                    : "the peer closed inside the PROXY header");
  }
  auto fed = parser.feed(std::span<const uint8_t>(buf, static_cast<size_t>(n)));
  if (!fed) return refuse("bad PROXY header: " + fed.error().message());
  // Take exactly the header's bytes out of the socket; what follows stays for the connection.
  size_t left = *fed;
  while (left > 0) {
    ssize_t m = ::recv(fd, buf, left, 0);
    if (m < 0 && errno == EINTR) continue;
    if (m <= 0) return refuse(std::string("read error: ") + (m == 0 ? "end of stream" : std::strerror(errno)));
    left -= static_cast<size_t>(m);
    header_bytes += static_cast<size_t>(m);
  }
  if (parser.done()) succeed();
}

void ProxyHeaderReader::Pending::succeed() {
  const protocol::ProxyHeader& h = parser.header();
  PeerAddress peer = h.client() ? from_endpoint(*h.client()) : std::move(socket_peer);
  SLUICE_LOG_DEBUG("conn={} proto={} event=proxy_header version={} kind={} peer={} via={}", id, proto, h.version,
                   kind_name(h.kind), peer.text, h.client() ? socket_peer.text : peer.text);
  ProxyHeaderReader* reader = owner;
  const int socket = fd;
  const uint64_t conn_id = id;
  const bool is_tls = tls;
  detach();  // this object may be gone from here on
  reader->on_ready_(socket, conn_id, is_tls, std::move(peer));
}

void ProxyHeaderReader::Pending::refuse(const std::string& why) {
  if (owner == nullptr) return;
  if (!why.empty()) {
    SLUICE_LOG_WARN("conn={} proto={} peer={} event=proxy_header_refused reason=\"{}\"", id, proto, socket_peer.text,
                    why);
  }
  const int socket = fd;
  detach();
  ::close(socket);
}

void ProxyHeaderReader::Pending::detach() {
  owner->finish(this);
  owner = nullptr;
  // Stopping the poll takes the descriptor out of the loop's watchers at once, so the connection
  // that adopts it next can register its own handle on it.
  uv_poll_stop(&poll);
  uv_timer_stop(&timer);
  close_handle(&poll, &Pending::on_handle_closed);
  close_handle(&timer, &Pending::on_handle_closed);
}

void ProxyHeaderReader::Pending::on_handle_closed(uv_handle_t* handle) {
  auto* self = static_cast<Pending*>(handle->data);
  if (--self->open_handles == 0) delete self;
}

}  // namespace sluice::server
