// DescriptorReserve and TcpListener at the descriptor limit, lowered while they run (setrlimit on
// this process, as `prlimit --pid` does to a running server) and raised again; AdmissionPolicy's
// verdicts. The clients are this process's own sockets, opened before the limit is lowered.
#include <doctest/doctest.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include <cerrno>
#include <chrono>
#include <functional>
#include <thread>
#include <vector>

#include "server/io/accept_policy.hpp"
#include "server/io/listener.hpp"
#include "server/io/logging.hpp"

using namespace sluice;
using namespace sluice::server;
using namespace std::chrono_literals;

namespace {

// The soft descriptor limit, restored at the end of a test. The limit is on descriptor numbers
// (a new one takes the lowest free number), so the free numbers below the highest one open are
// filled first and the room left is exactly what is asked.
struct SoftLimit {
  rlimit saved{};
  std::vector<int> fillers;
  SoftLimit() { getrlimit(RLIMIT_NOFILE, &saved); }
  ~SoftLimit() {
    setrlimit(RLIMIT_NOFILE, &saved);
    for (int fd : fillers) close(fd);
  }
  // Room for `room` more descriptors.
  void leave_room(int room) {
    int highest = 0;
    DIR* d = opendir("/proc/self/fd");
    REQUIRE(d != nullptr);
    while (dirent* e = readdir(d)) highest = std::max(highest, atoi(e->d_name));
    closedir(d);
    for (;;) {
      const int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
      REQUIRE(fd >= 0);
      if (fd > highest) {
        close(fd);
        break;
      }
      fillers.push_back(fd);
    }
    rlimit r = saved;
    r.rlim_cur = rlim_t(highest + 1 + room);
    REQUIRE(setrlimit(RLIMIT_NOFILE, &r) == 0);
  }
  void restore() { REQUIRE(setrlimit(RLIMIT_NOFILE, &saved) == 0); }
};

struct Loop {
  uv_loop_t loop{};
  uv_check_t check{};
  uint64_t iterations = 0;
  Loop() {
    uv_loop_init(&loop);
    uv_check_init(&loop, &check);
    check.data = this;
    uv_check_start(&check, [](uv_check_t* c) { ++static_cast<Loop*>(c->data)->iterations; });
    uv_unref(reinterpret_cast<uv_handle_t*>(&check));
  }
  ~Loop() {
    uv_close(reinterpret_cast<uv_handle_t*>(&check), nullptr);
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_loop_close(&loop);
  }
  // Runs the loop (blocking in it, as a server does) for `d`, or until `done`.
  void run_for(
      std::chrono::milliseconds d, const std::function<bool()>& done = [] { return false; }) {
    using namespace std::chrono;
    uv_timer_t wake{};  // ends the wait at the deadline (one turn of its own, not one per ms)
    uv_timer_init(&loop, &wake);
    const auto end = steady_clock::now() + d;
    for (auto now = steady_clock::now(); !done() && now < end; now = steady_clock::now()) {
      uv_update_time(&loop);
      uv_timer_start(
          &wake, [](uv_timer_t*) {}, uint64_t(duration_cast<milliseconds>(end - now).count()) + 1, 0);
      uv_run(&loop, UV_RUN_ONCE);
    }
    uv_close(reinterpret_cast<uv_handle_t*>(&wake), nullptr);
    uv_run(&loop, UV_RUN_NOWAIT);
  }
};

int connect_to(uint16_t port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);  // done once in the backlog
  timeval tv{0, 20000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  return fd;
}

// The server closed this client (end of stream or reset), rather than keeping it or leaving it waiting.
bool closed_by_server(int fd) {
  char c;
  const ssize_t n = recv(fd, &c, 1, 0);
  return n == 0 || (n < 0 && errno == ECONNRESET);
}

uint64_t refused_count() { return GuardCounters::get(GuardEvent::AcceptRefused); }

}  // namespace

TEST_CASE("at the limit each pending connection is accepted or closed at once, and the listener does not spin") {
  SLUICE_LOG_WARN("test=accept_policy event=warm_up");  // the logger's first line opens nothing later
  Loop l;
  DescriptorReserve reserve(2);
  std::vector<int> accepted;
  TcpListener listener(
      &l.loop, "rtmp", 8, [&](int fd, const sockaddr_storage&) { accepted.push_back(fd); }, reserve);
  REQUIRE(listener.listen({"127.0.0.1", 0}));
  const uint16_t port = listener.bound().port;
  std::vector<int> clients;
  for (int i = 0; i < 40; ++i) clients.push_back(connect_to(port));
  const uint64_t refused_before = refused_count();

  // Checked once the limit is back: a failing check's report needs descriptors (UBSan's too).
  SoftLimit limit;
  limit.leave_room(5);
  l.run_for(1000ms, [&] { return refused_count() - refused_before == 35; });
  const size_t accepted_at_limit = accepted.size();
  const uint64_t refused = refused_count() - refused_before;
  int closed = 0;
  for (int fd : clients) closed += closed_by_server(fd) ? 1 : 0;
  const size_t spares = reserve.spares();
  // Nothing pending: the loop sleeps (a spinning listener turns it thousands of times).
  const uint64_t before = l.iterations;
  l.run_for(300ms);
  const uint64_t idle_iterations = l.iterations - before;
  limit.restore();
  CHECK(accepted_at_limit == 5);
  CHECK(refused == 35);
  CHECK(closed == 35);  // none left waiting in the backlog
  CHECK(spares == 2);   // each spare spent came back
  CHECK(idle_iterations < 20);

  // The limit raised again: new connections are accepted.
  for (int i = 0; i < 3; ++i) clients.push_back(connect_to(port));
  l.run_for(1000ms, [&] { return accepted.size() == 8; });
  CHECK(accepted.size() == 8);

  listener.close();
  for (int fd : accepted) close(fd);
  for (int fd : clients) close(fd);
}

TEST_CASE("with no spare to spend the listener pauses instead of spinning, and takes what waited once raised") {
  SLUICE_LOG_WARN("test=accept_policy event=warm_up");
  Loop l;
  DescriptorReserve reserve(0);
  std::vector<int> accepted;
  TcpListener listener(
      &l.loop, "http", 8, [&](int fd, const sockaddr_storage&) { accepted.push_back(fd); }, reserve);
  REQUIRE(listener.listen({"127.0.0.1", 0}));
  std::vector<int> clients;
  for (int i = 0; i < 10; ++i) clients.push_back(connect_to(listener.bound().port));

  SoftLimit limit;
  limit.leave_room(0);
  const uint64_t before = l.iterations;
  l.run_for(500ms);
  const uint64_t iterations = l.iterations - before;
  const size_t accepted_at_limit = accepted.size();
  int closed = 0;
  for (int fd : clients) closed += closed_by_server(fd) ? 1 : 0;
  limit.restore();
  // Paused for DescriptorReserve::kPauseMs (100 ms) after each try: about five tries, each an
  // iteration for the poll and one for the timer. Without the pause the readable socket turns the
  // loop without end.
  CHECK(iterations < 30);
  CHECK(accepted_at_limit == 0);
  CHECK(closed == 0);  // waiting, not refused: nothing to refuse with

  l.run_for(1000ms, [&] { return accepted.size() == 10; });
  CHECK(accepted.size() == 10);

  listener.close();
  for (int fd : accepted) close(fd);
  for (int fd : clients) close(fd);
}

TEST_CASE("admission: the connection limit counts every connection but the new one; per_ip refusals are counted") {
  AdmissionPolicy policy("rtmp");
  CHECK(policy.over_limit(5, 0).empty());  // 0: no limit
  CHECK(policy.over_limit(9, 10).empty());
  const uint64_t limited = GuardCounters::get(GuardEvent::ConnectionLimit);
  CHECK(policy.over_limit(10, 10) == "too many connections (limits.connections=10)");
  CHECK(GuardCounters::get(GuardEvent::ConnectionLimit) == limited + 1);
  const uint64_t per_ip = GuardCounters::get(GuardEvent::PerIpLimit);
  policy.per_ip_refused(1, "127.0.0.1:5000", 4, 1000);
  policy.per_ip_refused(2, "127.0.0.1:5001", 4, 1001);
  CHECK(GuardCounters::get(GuardEvent::PerIpLimit) == per_ip + 2);
}
