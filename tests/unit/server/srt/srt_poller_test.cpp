// SrtPoller (server/srt/srt_poller.hpp) with real libsrt sockets on 127.0.0.1: a listener's
// readiness reaches the loop and it accepts; a message sent by the caller makes the accepted
// socket readable on the loop, which reads it; the caller's close is reported; stop() ends the
// thread.
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <srt/srt.h>
#include <sys/socket.h>
#include <uv.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "server/srt/srt_poller.hpp"

using namespace sluice::server;
using namespace std::chrono_literals;

namespace {

sockaddr_in loopback(uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

bool run_until(uv_loop_t* loop, const std::function<bool()>& done, std::chrono::milliseconds limit = 5000ms) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > end) return false;
    uv_run(loop, UV_RUN_NOWAIT);
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

}  // namespace

TEST_CASE("SrtPoller: accept, read and a peer's close, each on the loop") {
  uv_loop_t loop;
  uv_loop_init(&loop);
  std::vector<SrtPoller::Ready> seen;
  const std::thread::id loop_thread = std::this_thread::get_id();
  bool on_loop = true;
  SrtPoller poller(&loop, [&](const SrtPoller::Ready& r) {
    on_loop = on_loop && std::this_thread::get_id() == loop_thread;
    seen.push_back(r);
  });
  REQUIRE(poller.start().ok());

  SRTSOCKET listener = srt_create_socket();
  REQUIRE(listener != SRT_INVALID_SOCK);
  const bool no = false;
  srt_setsockflag(listener, SRTO_RCVSYN, &no, sizeof no);
  sockaddr_in at = loopback(0);
  REQUIRE(srt_bind(listener, reinterpret_cast<sockaddr*>(&at), sizeof at) == 0);
  int len = sizeof at;
  REQUIRE(srt_getsockname(listener, reinterpret_cast<sockaddr*>(&at), &len) == 0);
  REQUIRE(srt_listen(listener, 4) == 0);
  REQUIRE(poller.watch(listener, SRT_EPOLL_IN | SRT_EPOLL_ERR));

  // The caller connects from a thread of its own (a blocking connect).
  SRTSOCKET caller = srt_create_socket();
  std::thread connecting([&] {
    sockaddr_in to = loopback(ntohs(at.sin_port));
    srt_connect(caller, reinterpret_cast<sockaddr*>(&to), sizeof to);
  });
  auto has = [&](SRTSOCKET s, int ev) {
    for (const auto& r : seen) {
      if (r.socket == s && (r.events & ev)) return true;
    }
    return false;
  };
  REQUIRE(run_until(&loop, [&] { return has(listener, SRT_EPOLL_IN); }));
  sockaddr_storage peer{};
  int peer_len = sizeof peer;
  SRTSOCKET accepted = srt_accept(listener, reinterpret_cast<sockaddr*>(&peer), &peer_len);
  REQUIRE(accepted != SRT_INVALID_SOCK);
  connecting.join();
  srt_setsockflag(accepted, SRTO_RCVSYN, &no, sizeof no);
  REQUIRE(poller.watch(accepted, SRT_EPOLL_IN | SRT_EPOLL_ERR));

  const std::string message(1316, 'x');
  REQUIRE(srt_sendmsg2(caller, message.data(), static_cast<int>(message.size()), nullptr) == 1316);
  REQUIRE(run_until(&loop, [&] { return has(accepted, SRT_EPOLL_IN); }));
  char buf[1500];
  const int got = srt_recvmsg(accepted, buf, sizeof buf);
  REQUIRE(got == 1316);
  CHECK(std::string(buf, static_cast<size_t>(got)) == message);
  CHECK(srt_recvmsg(accepted, buf, sizeof buf) == SRT_ERROR);  // nothing more: it would block
  CHECK(srt_getlasterror(nullptr) == SRT_EASYNCRCV);

  srt_close(caller);
  REQUIRE(run_until(
      &loop, [&] { return has(accepted, SRT_EPOLL_ERR); }, 8000ms));
  CHECK(on_loop);

  srt_close(accepted);
  srt_close(listener);
  poller.stop();
  uv_run(&loop, UV_RUN_DEFAULT);  // the async's close
  CHECK(uv_loop_close(&loop) == 0);
}
