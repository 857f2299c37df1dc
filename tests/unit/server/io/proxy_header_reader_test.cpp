// ProxyHeaderReader on a real loop and real loopback TCP sockets: the header is taken from the
// socket and nothing more (the client's next bytes stay readable on the fd handed on), split
// headers, LOCAL keeps the socket's peer, malformed / late headers and peers outside
// proxy_protocol_from close the socket without a callback, close_all, and every handle closes.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <arpa/inet.h>

#include <chrono>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "config/address.hpp"
#include "server/io/proxy_header_reader.hpp"

using sluice::server::PeerAddress;
using sluice::server::ProxyHeaderReader;
using namespace std::chrono_literals;

namespace {

// A listening socket on 127.0.0.1 and one connection to it: the accepted end is what the reader
// gets (non-blocking, as TcpListener hands it), the client end is the test's.
struct Conn {
  int client = -1;
  int accepted = -1;
  uint16_t client_port = 0;
  Conn() {
    int lfd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(lfd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(::listen(lfd, 4) == 0);
    socklen_t len = sizeof a;
    ::getsockname(lfd, reinterpret_cast<sockaddr*>(&a), &len);
    client = ::socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(::connect(client, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    accepted = ::accept4(lfd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    REQUIRE(accepted >= 0);
    ::close(lfd);
    sockaddr_in mine{};
    len = sizeof mine;
    ::getsockname(client, reinterpret_cast<sockaddr*>(&mine), &len);
    client_port = ntohs(mine.sin_port);
  }
  ~Conn() {
    if (client >= 0) ::close(client);
  }
  void send(const std::string& s) const {
    REQUIRE(::send(client, s.data(), s.size(), MSG_NOSIGNAL) == ssize_t(s.size()));
  }
  // True when the server end is gone (EOF or reset), waiting up to 1 s.
  bool closed_by_server() const {
    timeval tv{1, 0};
    ::setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    char b[64];
    ssize_t n = ::recv(client, b, sizeof b, 0);
    return n == 0 || (n < 0 && (errno == ECONNRESET || errno == EPIPE));
  }
};

struct Ready {
  int fd = -1;
  uint64_t id = 0;
  bool tls = false;
  PeerAddress peer;
};

struct Fixture {
  uv_loop_t loop{};
  std::optional<Ready> ready;
  std::vector<sluice::config::Cidr> from;
  std::unique_ptr<ProxyHeaderReader> reader;

  explicit Fixture(std::chrono::milliseconds timeout = 2000ms) {
    uv_loop_init(&loop);
    reader = std::make_unique<ProxyHeaderReader>(&loop, timeout, [this](int fd, uint64_t id, bool tls, PeerAddress p) {
      ready = Ready{fd, id, tls, std::move(p)};
    });
  }
  ~Fixture() {
    if (ready) ::close(ready->fd);
    reader->close_all();
    reader.reset();
    uv_run(&loop, UV_RUN_DEFAULT);
    CHECK(uv_loop_close(&loop) == 0);  // every handle closed
  }
  void start(const Conn& c, bool tls = false) { reader->start(c.accepted, 7, {"rtmp", tls, from}); }
  // Runs the loop until cond() or `limit` passes.
  template <typename F>
  bool run_until(F cond, std::chrono::milliseconds limit = 1000ms) {
    auto end = std::chrono::steady_clock::now() + limit;
    while (!cond() && std::chrono::steady_clock::now() < end) {
      uv_run(&loop, UV_RUN_NOWAIT);
      std::this_thread::sleep_for(2ms);
    }
    return cond();
  }
};

std::string v2(uint8_t command, const char* src, uint16_t sport) {
  std::string out("\r\n\r\n\0\r\nQUIT\n", 12);
  out += static_cast<char>(0x20 | command);
  out += static_cast<char>(0x11);
  out += std::string("\0\x0c", 2);
  in_addr s{}, d{};
  inet_pton(AF_INET, src, &s);
  inet_pton(AF_INET, "10.0.0.1", &d);
  out.append(reinterpret_cast<const char*>(&s), 4);
  out.append(reinterpret_cast<const char*>(&d), 4);
  out += static_cast<char>(sport >> 8);
  out += static_cast<char>(sport & 0xFF);
  out += std::string("\x07\x8f", 2);
  return out;
}

std::string read_fd(int fd) {
  std::string out;
  char b[256];
  for (int i = 0; i < 50; ++i) {
    ssize_t n = ::recv(fd, b, sizeof b, MSG_DONTWAIT);
    if (n > 0) {
      out.append(b, static_cast<size_t>(n));
      continue;
    }
    if (!out.empty()) break;
    std::this_thread::sleep_for(2ms);
  }
  return out;
}

}  // namespace

TEST_CASE("proxy header reader: a v1 header in two pieces; the client's bytes after it stay in the socket") {
  Fixture f;
  Conn c;
  f.start(c, true);
  CHECK(f.reader->pending() == 1);
  c.send("PROXY TCP4 203.0.113.7 10.0");
  f.run_until([] { return false; }, 50ms);
  CHECK_FALSE(f.ready);
  c.send(".0.1 40000 1935\r\n\x03RTMP");
  REQUIRE(f.run_until([&] { return f.ready.has_value(); }));
  CHECK(f.ready->id == 7);
  CHECK(f.ready->tls);
  CHECK(f.ready->peer.text == "203.0.113.7:40000");
  CHECK(f.ready->peer.raw == std::vector<uint8_t>{203, 0, 113, 7});
  CHECK(f.reader->pending() == 0);
  CHECK(read_fd(f.ready->fd) == "\x03RTMP");
}

TEST_CASE("proxy header reader: v2 PROXY gives the source; v2 LOCAL keeps the socket's peer") {
  {
    Fixture f;
    Conn c;
    f.start(c);
    c.send(v2(1, "198.51.100.20", 51234) + "GET / HTTP/1.1\r\n");
    REQUIRE(f.run_until([&] { return f.ready.has_value(); }));
    CHECK(f.ready->peer.text == "198.51.100.20:51234");
    CHECK(read_fd(f.ready->fd) == "GET / HTTP/1.1\r\n");
  }
  {
    Fixture f;
    Conn c;
    f.start(c);
    c.send(v2(0, "198.51.100.20", 51234) + "GET /readyz HTTP/1.0\r\n\r\n");
    REQUIRE(f.run_until([&] { return f.ready.has_value(); }));
    CHECK(f.ready->peer.text == "127.0.0.1:" + std::to_string(c.client_port));
    CHECK(f.ready->peer.raw == std::vector<uint8_t>{127, 0, 0, 1});
    CHECK(read_fd(f.ready->fd) == "GET /readyz HTTP/1.0\r\n\r\n");
  }
  {
    Fixture f;
    Conn c;
    f.start(c);
    c.send("PROXY UNKNOWN\r\nX");
    REQUIRE(f.run_until([&] { return f.ready.has_value(); }));
    CHECK(f.ready->peer.text == "127.0.0.1:" + std::to_string(c.client_port));
    CHECK(read_fd(f.ready->fd) == "X");
  }
}

TEST_CASE("proxy header reader: no header, a malformed one, end of stream: closed, no callback") {
  for (std::string bytes : {std::string("\x03") + std::string(1536, '\0'), std::string("GET / HTTP/1.1\r\n\r\n"),
                            std::string("PROXY TCP4 1.2.3.400 10.0.0.1 1 2\r\n")}) {
    Fixture f;
    Conn c;
    f.start(c);
    c.send(bytes);
    REQUIRE(f.run_until([&] { return f.reader->pending() == 0; }));
    CHECK_FALSE(f.ready);
    CHECK(c.closed_by_server());
  }
  Fixture f;
  Conn c;
  f.start(c);
  c.send("PROXY TCP4 ");
  ::shutdown(c.client, SHUT_WR);
  REQUIRE(f.run_until([&] { return f.reader->pending() == 0; }));
  CHECK_FALSE(f.ready);
}

TEST_CASE("proxy header reader: a header that does not complete in time is closed at the timeout") {
  Fixture f(150ms);
  Conn c;
  f.start(c);
  c.send("PROXY TCP4 203.0.113.7");
  auto t0 = std::chrono::steady_clock::now();
  REQUIRE(f.run_until([&] { return f.reader->pending() == 0; }, 2000ms));
  auto took = std::chrono::steady_clock::now() - t0;
  CHECK(took >= 120ms);
  CHECK(took < 1000ms);
  CHECK_FALSE(f.ready);
  CHECK(c.closed_by_server());
}

TEST_CASE("proxy header reader: proxy_protocol_from") {
  {
    Fixture f;
    f.from = {*sluice::config::parse_cidr("10.0.0.0/8")};
    Conn c;
    f.start(c);
    // A direct client: handed on at once with its own address, nothing read.
    CHECK(f.reader->pending() == 0);
    REQUIRE(f.ready.has_value());
    CHECK(f.ready->peer.text.rfind("127.0.0.1:", 0) == 0);
  }
  Fixture f;
  f.from = {*sluice::config::parse_cidr("127.0.0.0/8")};
  Conn c;
  f.start(c);
  c.send("PROXY TCP4 203.0.113.7 10.0.0.1 40000 1935\r\n");
  REQUIRE(f.run_until([&] { return f.ready.has_value(); }));
  CHECK(f.ready->peer.text == "203.0.113.7:40000");
}

TEST_CASE("proxy header reader: close_all closes the sockets still waiting") {
  Fixture f;
  Conn a, b;
  f.start(a);
  f.start(b);
  CHECK(f.reader->pending() == 2);
  f.reader->close_all();
  CHECK(f.reader->pending() == 0);
  CHECK(a.closed_by_server());
  CHECK(b.closed_by_server());
}

TEST_CASE("proxy header reader: the timeout is half the handshake timeout, at most 5 s") {
  CHECK(ProxyHeaderReader::timeout_for(10s) == 5s);
  CHECK(ProxyHeaderReader::timeout_for(60s) == 5s);
  CHECK(ProxyHeaderReader::timeout_for(4s) == 2s);
  CHECK(ProxyHeaderReader::timeout_for(100ms) == 50ms);
}
