// server/access/hook_messages: what a hook is sent and how its answer is read.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "server/access/hook_client.hpp"
#include "server/access/hook_messages.hpp"

using namespace sluice::server;

namespace {
HookReply reply(long status, std::string body = {}) {
  HookReply r;
  r.completed = true;
  r.status = status;
  r.body = std::move(body);
  return r;
}
}  // namespace

TEST_CASE("hook_body: the fields, params decoded, bad UTF-8 replaced") {
  HookEvent e;
  e.action = "publish";
  e.client_id = 7;
  set_hook_peer(e, "[::1]:5555");
  e.app = "live";
  e.stream = "cam";
  e.query = "key=a%20b&x=1&x=2";
  e.tc_url = "rtmp://h/live\xff";
  e.protocol = "rtmp";
  e.server_id = "node-a";
  auto j = nlohmann::json::parse(hook_body(e));
  CHECK(j["action"] == "publish");
  CHECK(j["client_id"] == 7);
  CHECK(j["address"] == "::1");
  CHECK(j["port"] == 5555);
  CHECK(j["params"]["key"] == "a b");
  CHECK(j["params"]["x"] == "1");
  CHECK(j["query"] == "key=a%20b&x=1&x=2");
  CHECK(j["server_id"] == "node-a");
  CHECK_FALSE(j.contains("duration_ms"));
  CHECK(j["tc_url"].get<std::string>().starts_with("rtmp://h/live"));
  e.duration_ms = 1234;
  e.reason = "unpublish";
  j = nlohmann::json::parse(hook_body(e));
  CHECK(j["duration_ms"] == 1234);
  CHECK(j["reason"] == "unpublish");
  set_hook_peer(e, "10.0.0.1:1935");
  CHECK(e.address == "10.0.0.1");
  CHECK(e.port == 1935);
}

TEST_CASE("hook_verdict: 2xx admits, renames, lifetimes; 4xx denies; failures follow fail") {
  HookVerdict v = hook_verdict(reply(200), "on_publish", false);
  CHECK(v.allowed);
  CHECK(v.name.empty());
  v = hook_verdict(reply(204, R"({"name":"other","lifetime":2.5})"), "on_publish", false);
  CHECK(v.allowed);
  CHECK(v.name == "other");
  CHECK(v.lifetime_s == 3);
  v = hook_verdict(reply(200, "not json"), "on_publish", false);
  CHECK(v.allowed);
  v = hook_verdict(reply(403, R"({"reason":"banned\nforever"})"), "on_publish", true);
  CHECK_FALSE(v.allowed);  // an explicit refusal is not a failure: fail open does not apply
  CHECK_FALSE(v.failed);
  CHECK(v.reason == "banned forever");
  v = hook_verdict(reply(404), "on_play", false);
  CHECK(v.reason == "denied by the on_play hook");
  v = hook_verdict(reply(500), "on_play", false);
  CHECK_FALSE(v.allowed);
  CHECK(v.failed);
  CHECK(v.reason == "the on_play hook answered HTTP 500");
  CHECK(hook_verdict(reply(500), "on_play", true).allowed);
  CHECK_FALSE(hook_verdict(reply(302), "on_play", false).allowed);
  HookReply timeout;
  timeout.error = "timeout";
  v = hook_verdict(timeout, "on_play", false);
  CHECK_FALSE(v.allowed);
  CHECK(v.reason == "the on_play hook did not answer (timeout)");
  CHECK(hook_verdict(timeout, "on_play", true).allowed);
}
