// RegistryClient against a real redis-server started by the test (installed by .ci/run through
// tools/install-deps.sh): AUTH and SELECT on connect, LeaseBook's claim, refresh and release
// scripts doing in Redis what lease_book.hpp says, and the client's behaviour when Redis dies and
// comes back (commands answered with nullopt, then a reconnect).
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uv.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "config/cluster.hpp"
#include "server/cluster/lease_book.hpp"
#include "server/cluster/registry_client.hpp"

extern char** environ;

using namespace sluice;
using namespace sluice::server::cluster;
using namespace std::chrono_literals;

namespace {

uint16_t free_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

bool can_connect(uint16_t port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool ok = connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  close(fd);
  return ok;
}

// redis-server on a loopback port with a password and no persistence.
struct Redis {
  uint16_t port;
  pid_t pid = -1;
  explicit Redis(uint16_t p) : port(p) { start(); }
  ~Redis() { kill_now(); }
  void start() {
    std::vector<std::string> args = {"redis-server", "--bind", "127.0.0.1",    "--port", std::to_string(port),
                                     "--save",       "",       "--appendonly", "no",     "--requirepass",
                                     "pw-test"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    REQUIRE(posix_spawnp(&pid, "redis-server", nullptr, nullptr, argv.data(), environ) == 0);
    for (int i = 0; i < 200 && !can_connect(port); ++i) std::this_thread::sleep_for(20ms);
    REQUIRE(can_connect(port));
  }
  void kill_now() {
    if (pid <= 0) return;
    ::kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    pid = -1;
  }
};

struct Loop {
  uv_loop_t loop{};
  Loop() { uv_loop_init(&loop); }
  ~Loop() {
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_loop_close(&loop);
  }
  // Runs the loop until `done` says so or the deadline passes.
  bool run_until(const std::function<bool()>& done, std::chrono::milliseconds limit = 5000ms) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (!done()) {
      if (std::chrono::steady_clock::now() > end) return false;
      uv_run(&loop, UV_RUN_NOWAIT);
      std::this_thread::sleep_for(1ms);
    }
    return true;
  }
};

config::ClusterConfig cluster_config(uint16_t port) {
  config::ClusterConfig c;
  std::string why;
  c.registry = config::RedisUrl::parse("redis://127.0.0.1:" + std::to_string(port) + "/3", why);
  c.password = {"pw-test", "inline"};
  c.node_id = "a";
  c.lease = 3000ms;
  return c;
}

// stop() and the loop turns until the client's handles are closed (they live in the object).
void finish(Loop& l, RegistryClient& client) {
  client.stop();
  REQUIRE(l.run_until([&] { return client.closed(); }));
  uv_run(&l.loop, UV_RUN_NOWAIT);
}

std::optional<RegistryReply> call(Loop& l, RegistryClient& client, const std::vector<std::string>& argv) {
  std::optional<RegistryReply> got;
  bool answered = false;
  client.send({argv}, [&](std::optional<RegistryReply> r) {
    got = std::move(r);
    answered = true;
  });
  REQUIRE(l.run_until([&] { return answered; }));
  return got;
}

}  // namespace

TEST_CASE("claims, refreshes and releases do in Redis what LeaseBook says") {
  Redis redis(free_port());
  Loop l;
  auto cfg = cluster_config(redis.port);
  RegistryClient client(&l.loop, cfg, "test");
  int ups = 0;
  client.start([&](bool up) { ups += up ? 1 : 0; });
  REQUIRE(l.run_until([&] { return client.connected(); }));
  CHECK(ups == 1);
  CHECK(client.rtt_ms() >= 0);

  LeaseBook a("a", 1, 3000ms), b("b", 2, 3000ms);
  auto r = call(l, client, a.claim("live/cam").argv);
  REQUIRE(r);
  REQUIRE(r->type == RegistryReply::Type::Status);
  CHECK(a.on_claim_reply("live/cam", r->str, 0) == ClaimResult::Owned);
  // The database of the URL was selected; the value and its expiry are there.
  auto value = call(l, client, {"GET", "sluice:stream:live/cam"});
  REQUIRE(value);
  CHECK(value->str == "a 1");
  auto ttl = call(l, client, {"PTTL", "sluice:stream:live/cam"});
  CHECK((ttl->integer > 2000 && ttl->integer <= 3000));

  // Another node's claim of the same name fails: nil.
  r = call(l, client, b.claim("live/cam").argv);
  CHECK(r->type == RegistryReply::Type::Nil);

  // Refresh extends ours; b's refresh of a name it does not hold would find a's value: 0.
  std::this_thread::sleep_for(300ms);
  auto due = a.due_refreshes(1000);
  REQUIRE(due.size() == 1);
  r = call(l, client, due[0].second.argv);
  CHECK(r->integer == 1);
  ttl = call(l, client, {"PTTL", "sluice:stream:live/cam"});
  CHECK(ttl->integer > 2800);
  b.on_claim_reply("live/cam", std::string("OK"), 0);  // pretend b believed it owned it
  due = b.due_refreshes(1000);
  REQUIRE(due.size() == 1);
  r = call(l, client, due[0].second.argv);
  CHECK(r->integer == 0);
  CHECK(b.on_refresh_reply("live/cam", r->integer, 1000));  // b learns it lost
  CHECK(call(l, client, {"GET", "sluice:stream:live/cam"})->str == "a 1");

  // b's release leaves a's claim alone; a's deletes it.
  LeaseBook b2("b", 2, 3000ms);
  b2.on_claim_reply("live/cam", std::string("OK"), 0);
  auto rel_b = b2.release("live/cam");
  REQUIRE(rel_b);
  CHECK(call(l, client, rel_b->argv)->integer == 0);
  CHECK(call(l, client, {"GET", "sluice:stream:live/cam"})->str == "a 1");
  auto rel_a = a.release("live/cam");
  REQUIRE(rel_a);
  CHECK(call(l, client, rel_a->argv)->integer == 1);
  CHECK(call(l, client, {"EXISTS", "sluice:stream:live/cam"})->integer == 0);

  // A refresh after the key vanished (Redis restarted) writes it again.
  LeaseBook c("c", 3, 3000ms);
  c.on_claim_reply("live/r", std::string("OK"), 0);
  due = c.due_refreshes(1000);
  REQUIRE(due.size() == 1);
  CHECK(call(l, client, due[0].second.argv)->integer == 1);
  CHECK(call(l, client, {"GET", "sluice:stream:live/r"})->str == "c 3");
  finish(l, client);
}

TEST_CASE("a wrong password is refused and said; Redis going away answers nullopt, then reconnects") {
  Redis redis(free_port());
  Loop l;
  auto bad = cluster_config(redis.port);
  bad.password = {"wrong", "inline"};
  {
    RegistryClient client(&l.loop, bad, "test");
    client.start(nullptr);
    l.run_until([] { return false; }, 300ms);
    CHECK_FALSE(client.connected());
    finish(l, client);
  }

  auto cfg = cluster_config(redis.port);
  RegistryClient client(&l.loop, cfg, "test");
  int downs = 0, ups = 0;
  client.start([&](bool up) { (up ? ups : downs)++; });
  REQUIRE(l.run_until([&] { return client.connected(); }));
  redis.kill_now();
  REQUIRE(l.run_until([&] { return !client.connected(); }));
  CHECK(downs == 1);
  CHECK_FALSE(call(l, client, {"PING"}));  // not connected: nullopt at once
  redis.start();
  REQUIRE(l.run_until([&] { return client.connected(); }, 8000ms));  // backoff: 0.5..1 s, then 1..2 s
  CHECK(ups == 2);
  CHECK(client.reconnects() >= 1);
  CHECK(call(l, client, {"PING"})->str == "PONG");
  finish(l, client);
}

// A Redis that dies with one of our commands unread resets the connection (no orderly close).
// The loop must hear it at once, not at its next PING 5 s later: /readyz answers from it.
TEST_CASE("a reset from a dying Redis is noticed at once") {
  Redis redis(free_port());
  Loop l;
  auto cfg = cluster_config(redis.port);
  bool answered = false;  // before the client: its destructor answers what is still pending
  std::optional<RegistryReply> reply;
  RegistryClient client(&l.loop, cfg, "test");
  int downs = 0;
  client.start([&](bool up) { downs += up ? 0 : 1; });
  REQUIRE(l.run_until([&] { return client.connected(); }));
  // Stopped, Redis leaves our command in its socket buffer; killed, its kernel resets the
  // connection because of that unread data.
  REQUIRE(::kill(redis.pid, SIGSTOP) == 0);
  client.send({{"PING"}}, [&](std::optional<RegistryReply> r) {
    reply = std::move(r);
    answered = true;
  });
  l.run_until([] { return false; }, 100ms);  // the command is written
  CHECK_FALSE(answered);
  redis.kill_now();
  const auto t0 = std::chrono::steady_clock::now();
  // The reset arrives within a millisecond on loopback; the next PING would come after 5 s.
  REQUIRE(l.run_until([&] { return !client.connected(); }, 1000ms));
  CHECK(std::chrono::steady_clock::now() - t0 < 1000ms);
  CHECK(downs == 1);
  CHECK(answered);
  CHECK_FALSE(reply);  // the command in flight is answered with nullopt
  finish(l, client);
}

// docs/cluster.md, "A second publisher on another node": the taker swaps the claim and says so on
// the channel; the old owner's listener hears it and its refresh finds the claim lost.
TEST_CASE("a take: the swap in Redis, the message on the channel, heard again after a reconnect") {
  Redis redis(free_port());
  Loop l;
  auto cfg = cluster_config(redis.port);
  RegistryClient client(&l.loop, cfg, "test");
  client.start(nullptr);
  RegistryClient listener(&l.loop, cfg, "test listener");
  std::vector<std::string> heard;
  listener.listen("sluice:taken", [&](const std::string& m) { heard.push_back(m); });
  listener.start(nullptr);
  REQUIRE(l.run_until([&] { return client.connected() && listener.connected(); }));
  // SUBSCRIBE is sent once the listener is ready: wait until Redis counts it.
  auto subscribed = [&] {
    auto n = call(l, client, {"PUBSUB", "NUMSUB", "sluice:taken"});
    return n && n->elements.size() == 2 && n->elements[1].integer == 1;
  };
  REQUIRE(l.run_until(subscribed));

  LeaseBook a("a", 1, 3000ms), b("b", 2, 3000ms);
  a.on_claim_reply("live/cam", call(l, client, a.claim("live/cam").argv)->str, 0);
  CHECK(call(l, client, b.take_over("live/cam", "a 0").argv)->integer == 0);  // not what a holds: no swap
  CHECK(call(l, client, b.take_over("live/cam", "a 1").argv)->integer == 1);
  CHECK(call(l, client, {"GET", "sluice:stream:live/cam"})->str == "b 2");
  CHECK(call(l, client, {"PUBLISH", "sluice:taken", "live/cam"})->integer == 1);
  REQUIRE(l.run_until([&] { return heard.size() == 1; }));
  CHECK(heard[0] == "live/cam");
  auto check_now = a.refresh_now("live/cam");
  REQUIRE(check_now);
  CHECK(a.on_refresh_reply("live/cam", call(l, client, check_now->argv)->integer, 20));  // lost

  // Redis restarts: the listener subscribes again by itself.
  redis.kill_now();
  REQUIRE(l.run_until([&] { return !listener.connected() && !client.connected(); }));
  redis.start();
  REQUIRE(l.run_until([&] { return client.connected() && listener.connected(); }, 8000ms));
  REQUIRE(l.run_until(subscribed));
  call(l, client, {"PUBLISH", "sluice:taken", "live/two"});
  REQUIRE(l.run_until([&] { return heard.size() == 2; }));
  CHECK(heard[1] == "live/two");
  finish(l, listener);
  finish(l, client);
}
