// HookClient against a real HTTP server (a Python http.server child of the test): replies and
// statuses, timeouts, refused connections, the reply bound, cancellation, re-entrant callbacks,
// retries, closing with transfers in flight, and that the loop never waits on a hook.
#include "server/access/hook_client.hpp"

#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uv.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "unit/runqueue_wait.hpp"

extern char** environ;

using namespace sluice::server;
using namespace std::chrono_literals;

namespace {

// Paths: /ok echoes what it got, /close answers and closes the connection, /status/500, /slow (2 s), /flaky* (500 twice
// per path, then 200), /big and /big-chunked (100 KiB). It prints its port, and exits when its stdin closes, so a
// crashed test leaves no server behind.
const char* const kServerScript = R"PY(
import http.server, json, os, sys, threading, time

counts = {}
lock = threading.Lock()

class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, body, chunked=False, close=False):
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        if close:
            self.send_header("Connection", "close")
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for i in range(0, len(data), 8192):
                piece = data[i:i + 8192]
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            self.wfile.write(b"0\r\n\r\n")
        else:
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode("utf-8", "replace")
        with lock:
            counts[self.path] = counts.get(self.path, 0) + 1
            count = counts[self.path]
        if self.path == "/ok":
            self.reply(200, json.dumps({"body": body, "content_type": self.headers.get("Content-Type"),
                                        "user_agent": self.headers.get("User-Agent"), "method": self.command}))
        elif self.path == "/close":
            self.reply(200, '{"closed":true}', close=True)
        elif self.path == "/status/500":
            self.reply(500, '{"error":"boom"}')
        elif self.path == "/slow":
            time.sleep(2)
            self.reply(200, '{"slow":true}')
        elif self.path.startswith("/flaky"):
            self.reply(500 if count <= 2 else 200, json.dumps({"count": count}))
        elif self.path == "/big":
            self.reply(200, "x" * (100 * 1024))
        elif self.path == "/big-chunked":
            self.reply(200, "x" * (100 * 1024), chunked=True)
        else:
            self.reply(404, "{}")

class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128

    def handle_error(self, request, client_address):
        pass  # clients that time out or cancel close mid-reply

def exit_with_parent():
    sys.stdin.read()
    os._exit(0)

server = Server(("127.0.0.1", 0), Handler)
threading.Thread(target=exit_with_parent, daemon=True).start()
print(server.server_address[1], flush=True)
server.serve_forever()
)PY";

// Started by the first test that needs it, killed when the test binary exits.
class PyServer {
 public:
  PyServer() {
    char script[] = "/tmp/sluice_hook_server_XXXXXX.py";
    int fd = mkstemps(script, 3);
    if (fd < 0) return;
    const std::string text = kServerScript;
    bool written = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    ::close(fd);
    int to_child[2], from_child[2];
    if (!written || pipe2(to_child, O_CLOEXEC) != 0) return;
    if (pipe2(from_child, O_CLOEXEC) != 0) return;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, to_child[0], 0);
    posix_spawn_file_actions_adddup2(&actions, from_child[1], 1);
    // Debian's interpreter, not a version manager's shim on PATH (which adds ~400 ms to a start).
    char python[] = "/usr/bin/python3";
    char* argv[] = {python, script, nullptr};
    if (posix_spawn(&pid_, python, &actions, nullptr, argv, environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&actions);
    ::close(to_child[0]);
    ::close(from_child[1]);
    stdin_ = to_child[1];
    std::string line;
    char c;
    while (pid_ > 0 && read(from_child[0], &c, 1) == 1 && c != '\n') line += c;
    ::close(from_child[0]);
    unlink(script);  // Python has read it by the time it prints
    port_ = std::atoi(line.c_str());
  }
  ~PyServer() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      waitpid(pid_, nullptr, 0);
    }
    if (stdin_ >= 0) ::close(stdin_);
  }
  int port() const { return port_; }
  std::string url(const std::string& path) const { return "http://127.0.0.1:" + std::to_string(port_) + path; }

 private:
  pid_t pid_ = -1;
  int stdin_ = -1;
  int port_ = 0;
};

const PyServer& server() {
  static PyServer s;
  REQUIRE(s.port() > 0);
  return s;
}

// A port nobody listens on: bound once, then released.
int refused_port() {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a);
  getsockname(s, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(s);
  return ntohs(a.sin_port);
}

std::string refused_url() { return "http://127.0.0.1:" + std::to_string(refused_port()) + "/hook"; }

HookRequest request(std::string url, std::string body = "{}", std::chrono::milliseconds timeout = 3000ms) {
  return HookRequest{std::move(url), std::move(body), timeout};
}

struct Fixture {
  uv_loop_t loop{};
  uv_timer_t tick{};  // checks run_until's condition
  std::function<bool()> until;
  uint64_t deadline_ms = 0;
  std::unique_ptr<HookClient> client;

  Fixture() {
    uv_loop_init(&loop);
    uv_timer_init(&loop, &tick);
    tick.data = this;
    client = std::make_unique<HookClient>(&loop);
  }
  ~Fixture() {
    if (client) shut();
  }

  // Runs the loop until `done` holds; false when max_ms passed first.
  bool run_until(std::function<bool()> done, uint64_t max_ms = 5000) {
    until = std::move(done);
    uv_update_time(&loop);
    deadline_ms = uv_now(&loop) + max_ms;
    uv_timer_start(
        &tick,
        [](uv_timer_t* t) {
          auto* f = static_cast<Fixture*>(t->data);
          if (f->until() || uv_now(&f->loop) >= f->deadline_ms) uv_stop(&f->loop);
        },
        2, 2);
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_timer_stop(&tick);
    return until();
  }
  void run_for(uint64_t ms) {
    run_until([] { return false; }, ms);
  }

  // What the server does at shutdown: close, let the handles go, close the loop (0 = none left).
  int shut() {
    client->close();
    uv_close(reinterpret_cast<uv_handle_t*>(&tick), nullptr);
    uv_run(&loop, UV_RUN_DEFAULT);
    client.reset();
    return uv_loop_close(&loop);
  }

  // One post, run to its reply; also checks the reply did not come from inside post().
  HookReply post_and_wait(HookRequest req) {
    HookReply out;
    bool got = false, inside_post = true;
    client->post(std::move(req), [&](HookReply&& r) {
      CHECK_FALSE(inside_post);
      CHECK_FALSE(got);
      out = std::move(r);
      got = true;
    });
    inside_post = false;
    REQUIRE(run_until([&] { return got; }));
    return out;
  }
};

}  // namespace

TEST_CASE("a 2xx reply: the JSON body went out as POST application/json and the echo comes back") {
  Fixture f;
  const std::string body = R"({"event":"on_publish","stream":"live/cam"})";
  HookReply r = f.post_and_wait(request(server().url("/ok"), body));
  CHECK(r.ok());
  CHECK(r.completed);
  CHECK(r.status == 200);
  CHECK(r.error.empty());
  CHECK(r.elapsed_ms < 2000);
  auto echo = nlohmann::json::parse(r.body);
  CHECK(echo["body"] == body);
  CHECK(echo["content_type"] == "application/json");
  CHECK(echo["method"] == "POST");
  CHECK(echo["user_agent"].get<std::string>().rfind("sluice/", 0) == 0);
  CHECK(f.client->in_flight() == 0);
  CHECK(f.shut() == 0);
}

TEST_CASE("connections the server closes: the next request's socket may reuse the number") {
  Fixture f;
  // Each reply closes its connection, so curl drops the socket (CURL_POLL_REMOVE) and opens a
  // new one, usually with the same descriptor, while the old poll handle is still closing.
  for (int i = 0; i < 5; ++i) {
    CAPTURE(i);
    HookReply r = f.post_and_wait(request(server().url("/close")));
    CHECK(r.ok());
    CHECK(r.body == R"({"closed":true})");
  }
  // Back to back, with no loop iteration between the close and the next connect.
  int done = 0;
  std::function<void(HookReply &&)> again = [&](HookReply&& r) {
    CHECK(r.ok());
    if (++done < 5) f.client->post(request(server().url("/close")), again);
  };
  f.client->post(request(server().url("/close")), again);
  CHECK(f.run_until([&] { return done == 5; }));
  CHECK(f.shut() == 0);
}

TEST_CASE("a 500 reply is completed but not ok") {
  Fixture f;
  HookReply r = f.post_and_wait(request(server().url("/status/500")));
  CHECK(r.completed);
  CHECK(r.status == 500);
  CHECK_FALSE(r.ok());
  CHECK(r.error.empty());
  CHECK(r.body == R"({"error":"boom"})");
  CHECK(f.shut() == 0);
}

TEST_CASE("a slow server: the attempt ends at its timeout") {
  Fixture f;
  HookReply r = f.post_and_wait(request(server().url("/slow"), "{}", 300ms));
  CHECK_FALSE(r.completed);
  CHECK_FALSE(r.ok());
  CHECK(r.error.find("timeout") != std::string::npos);
  CHECK(r.elapsed_ms >= 250);
  CHECK(r.elapsed_ms < 1500);
  CHECK(f.shut() == 0);
}

TEST_CASE("transfers queued behind the connection limit still end at their timeout") {
  Fixture f;
  // kMaxConnections slow requests with a long timeout hold every connection curl may open; the
  // ones posted after them wait in curl's queue, where curl does not time them. The sweep ends
  // them at their own (short) deadline, long before a connection frees up.
  constexpr int kHolders = static_cast<int>(HookClient::kMaxConnections);
  constexpr int kQueued = 20;
  int holders_done = 0;
  for (int i = 0; i < kHolders; ++i) {
    f.client->post(request(server().url("/slow"), "{}", 5000ms), [&](HookReply&&) { ++holders_done; });
  }
  std::vector<HookReply> replies(kQueued);
  int done = 0;
  for (int i = 0; i < kQueued; ++i) {
    f.client->post(request(server().url("/slow"), "{}", 300ms), [&, i](HookReply&& r) {
      replies[i] = std::move(r);
      ++done;
    });
  }
  REQUIRE(f.run_until([&] { return done == kQueued; }, 5000));
  CHECK(holders_done == 0);  // the slow server answers after 2 s: the queued ones did not wait for that
  for (const HookReply& r : replies) {
    CHECK_FALSE(r.completed);
    CHECK(r.error == "timeout");
    CHECK(r.elapsed_ms >= 290);
    CHECK(r.elapsed_ms < 1000);
  }
  REQUIRE(f.run_until([&] { return holders_done == kHolders; }, 10000));
  CHECK(f.client->in_flight() == 0);
  CHECK(f.shut() == 0);
}

TEST_CASE("a refused connection fails quickly") {
  Fixture f;
  HookReply r = f.post_and_wait(request(refused_url()));
  CHECK_FALSE(r.completed);
  CHECK(r.status == 0);
  CHECK_FALSE(r.error.empty());
  CHECK(r.elapsed_ms < 1000);
  CHECK(f.shut() == 0);
}

TEST_CASE("a reply over 64 KiB is refused, with a length or chunked") {
  Fixture f;
  for (const char* path : {"/big", "/big-chunked"}) {
    CAPTURE(path);
    HookReply r = f.post_and_wait(request(server().url(path)));
    CHECK_FALSE(r.completed);
    CHECK_FALSE(r.ok());
    CHECK(r.error == "response too large");
    CHECK(r.body.empty());
  }
  CHECK(f.shut() == 0);
}

TEST_CASE("URLs other than http(s) fail, answered later and not inside post()") {
  Fixture f;
  for (const char* url : {"ftp://127.0.0.1/x", "file:///etc/passwd", "127.0.0.1/ok", ""}) {
    CAPTURE(url);
    HookReply r = f.post_and_wait(request(url));
    CHECK_FALSE(r.completed);
    CHECK_FALSE(r.error.empty());
  }
  CHECK(f.shut() == 0);
}

TEST_CASE("cancel: the callback never runs, whether the transfer is queued, running or finished") {
  Fixture f;
  int calls = 0;
  // Cancelled before the loop ran at all.
  uint64_t first = f.client->post(request(server().url("/ok")), [&](HookReply&&) { ++calls; });
  f.client->cancel(first);
  f.client->cancel(first);      // twice: no-op
  f.client->cancel(987654321);  // unknown: no-op
  CHECK(f.client->in_flight() == 0);

  // Cancelled while the server sleeps on it.
  uint64_t slow = f.client->post(request(server().url("/slow")), [&](HookReply&&) { ++calls; });
  f.run_for(200);
  CHECK(f.client->in_flight() == 1);
  f.client->cancel(slow);
  CHECK(f.client->in_flight() == 0);

  // Whichever of two finishes first cancels the other, from inside its callback.
  uint64_t a = 0, b = 0;
  int pair_calls = 0;
  a = f.client->post(request(server().url("/ok")), [&](HookReply&&) {
    ++pair_calls;
    f.client->cancel(b);
  });
  b = f.client->post(request(server().url("/ok")), [&](HookReply&&) {
    ++pair_calls;
    f.client->cancel(a);
  });
  CHECK(f.run_until([&] { return f.client->in_flight() == 0; }));
  f.run_for(300);
  CHECK(pair_calls == 1);
  CHECK(calls == 0);
  CHECK(f.shut() == 0);
}

TEST_CASE("50 concurrent posts all complete, each with its own reply") {
  Fixture f;
  constexpr int kPosts = 50;
  std::vector<HookReply> replies(kPosts);
  int done = 0;
  for (int i = 0; i < kPosts; ++i) {
    f.client->post(request(server().url("/ok"), R"({"n":)" + std::to_string(i) + "}"), [&, i](HookReply&& r) {
      replies[i] = std::move(r);
      ++done;
    });
  }
  CHECK(f.client->in_flight() == kPosts);
  REQUIRE(f.run_until([&] { return done == kPosts; }, 15000));
  for (int i = 0; i < kPosts; ++i) {
    CAPTURE(i);
    REQUIRE(replies[i].ok());
    CHECK(nlohmann::json::parse(replies[i].body)["body"] == R"({"n":)" + std::to_string(i) + "}");
  }
  CHECK(f.client->in_flight() == 0);
  CHECK(f.shut() == 0);
}

TEST_CASE("a callback may post again, and one that throws does not stop the others") {
  Fixture f;
  std::vector<long> chain;
  std::function<void(HookReply &&)> next = [&](HookReply&& r) {
    chain.push_back(r.status);
    if (chain.size() < 3) f.client->post(request(server().url("/ok")), next);
  };
  f.client->post(request(server().url("/ok")), next);
  bool after_throw = false;
  f.client->post(request(server().url("/status/500")), [](HookReply&&) { throw std::runtime_error("user bug"); });
  f.client->post(request("gopher://x"), [](HookReply&&) { throw 42; });
  f.client->post(request(server().url("/ok")), [&](HookReply&&) { after_throw = true; });
  CHECK(f.run_until([&] { return chain.size() == 3 && after_throw && f.client->in_flight() == 0; }));
  CHECK(chain == std::vector<long>{200, 200, 200});
  CHECK(f.shut() == 0);
}

TEST_CASE("post_reliably: retries a flaky hook until it answers 2xx") {
  Fixture f;
  bool called = false, delivered = false;
  HookReply last;
  uv_update_time(&f.loop);
  const uint64_t start = uv_now(&f.loop);
  f.client->post_reliably(request(server().url("/flaky?case=retry")), 3, 100ms, [&](bool ok, const HookReply& r) {
    CHECK_FALSE(called);
    called = true;
    delivered = ok;
    last = r;
  });
  CHECK(f.client->in_flight() == 1);
  REQUIRE(f.run_until([&] { return called; }));
  CHECK(delivered);
  CHECK(last.status == 200);
  CHECK(nlohmann::json::parse(last.body)["count"] == 3);  // the third request
  CHECK(uv_now(&f.loop) - start >= 300);                  // waited 100 ms, then 200 ms
  CHECK(f.client->in_flight() == 0);
  CHECK(f.shut() == 0);
}

TEST_CASE("post_reliably: gives up after its attempts; an empty `done` is fine") {
  Fixture f;
  int calls = 0;
  bool delivered = true;
  HookReply last;
  f.client->post_reliably(request(refused_url()), 2, 100ms, [&](bool ok, const HookReply& r) {
    ++calls;
    delivered = ok;
    last = r;
  });
  f.client->post_reliably(request(server().url("/ok")), 1, 100ms);
  REQUIRE(f.run_until([&] { return calls == 1 && f.client->in_flight() == 0; }));
  f.run_for(300);
  CHECK(calls == 1);
  CHECK_FALSE(delivered);
  CHECK_FALSE(last.completed);
  CHECK_FALSE(last.error.empty());
  CHECK(f.shut() == 0);
}

TEST_CASE("the loop keeps running while slow hooks are in flight") {
  Fixture f;
  const std::string slow = server().url("/slow");  // started before the heartbeat: its start blocks
  // A heartbeat every 10 ms. A gap between two beats is the loop being busy or blocked, or the
  // thread waiting for a CPU: beside a loaded suite on two cores the last alone reached 356 ms.
  // So the bar is on the gap less the time spent waiting for a CPU meanwhile: a hook that blocked
  // the loop would show its whole duration there (300 ms for the shortest one below).
  struct Beat {
    uint64_t last_ns = 0, last_wait_ns = 0, max_gap_ns = 0, max_own_gap_ns = 0, beats = 0;
  } beat;
  uv_timer_t heartbeat;
  uv_timer_init(&f.loop, &heartbeat);
  heartbeat.data = &beat;
  beat.last_ns = uv_hrtime();
  beat.last_wait_ns = sluice::test::runqueue_wait_ns();
  uv_timer_start(
      &heartbeat,
      [](uv_timer_t* t) {
        auto* b = static_cast<Beat*>(t->data);
        const uint64_t now = uv_hrtime(), wait = sluice::test::runqueue_wait_ns();
        const uint64_t gap = now - b->last_ns, waited = wait - b->last_wait_ns;
        b->max_gap_ns = std::max(b->max_gap_ns, gap);
        b->max_own_gap_ns = std::max(b->max_own_gap_ns, gap > waited ? gap - waited : 0);
        b->last_ns = now;
        b->last_wait_ns = wait;
        ++b->beats;
      },
      10, 10);
  int ok = 0, done = 0;
  for (int i = 0; i < 4; ++i) {
    f.client->post(request(slow, "{}", 5000ms), [&](HookReply&& r) {
      ok += r.ok();
      ++done;
    });
  }
  f.client->post(request(slow, "{}", 300ms), [&](HookReply&&) { ++done; });
  const bool all_done = f.run_until([&] { return done == 5; }, 10000);
  uv_close(reinterpret_cast<uv_handle_t*>(&heartbeat), nullptr);
  CHECK(all_done);
  CHECK(ok == 4);
  CHECK(beat.beats >= 100);  // about 2 s at 10 ms
  CHECK(beat.max_own_gap_ns < 100'000'000);
  MESSAGE("heartbeats: " << beat.beats << ", longest gap " << beat.max_gap_ns / 1000 << " us, "
                         << beat.max_own_gap_ns / 1000 << " us of it not waiting for a CPU");
  CHECK(f.shut() == 0);
}

TEST_CASE("close() with transfers and retries in flight: no callbacks, no handles left") {
  Fixture f;
  int calls = 0;
  for (int i = 0; i < 3; ++i) f.client->post(request(server().url("/slow")), [&](HookReply&&) { ++calls; });
  for (int i = 0; i < 2; ++i) f.client->post(request(server().url("/ok")), [&](HookReply&&) { ++calls; });
  f.client->post_reliably(request(refused_url()), 5, 1000ms, [&](bool, const HookReply&) { ++calls; });
  f.client->post(request("bad://url"), [&](HookReply&&) { ++calls; });  // ready, not yet told
  // The /ok and bad ones are told, the refused attempt failed: 3 /slow running, 1 retry waiting.
  REQUIRE(f.run_until([&] { return f.client->in_flight() == 4; }));
  f.client->post(request(server().url("/ok")), [&](HookReply&&) { ++calls; });
  const int before = calls;
  f.client->close();
  CHECK(f.client->in_flight() == 0);

  // After close: answered "closed", still never inside the call.
  HookReply after;
  bool inside_post = true, reliably_called = false, reliably_delivered = true;
  f.client->post(request(server().url("/ok")), [&](HookReply&& r) {
    CHECK_FALSE(inside_post);
    after = std::move(r);
  });
  f.client->post_reliably(request(server().url("/ok")), 3, 10ms, [&](bool ok, const HookReply&) {
    CHECK_FALSE(inside_post);
    reliably_called = true;
    reliably_delivered = ok;
  });
  inside_post = false;
  uv_run(&f.loop, UV_RUN_DEFAULT);  // returns once the one-shot handle of those replies is gone
  CHECK(calls == before);
  CHECK(after.error == "closed");
  CHECK_FALSE(after.completed);
  CHECK(reliably_called);
  CHECK_FALSE(reliably_delivered);
  CHECK(f.shut() == 0);
}

TEST_CASE("close() from inside a callback: the other finished transfers are not told") {
  Fixture f;
  int calls = 0;
  for (int i = 0; i < 3; ++i) {
    f.client->post(request("bad://url"), [&](HookReply&&) {
      ++calls;
      f.client->close();
    });
  }
  f.run_for(100);
  CHECK(calls == 1);
  CHECK(f.shut() == 0);
}
