#include "server/access/hook_messages.hpp"

#include "config/relay.hpp"

#include <nlohmann/json.hpp>

#include "server/access/hook_client.hpp"
#include "server/access/query.hpp"

namespace sluice::server {

using nlohmann::json;

std::string hook_body(const HookEvent& e) {
  if (e.action == "stream_alert") {
    // About a stream, not a client: none of a session's fields.
    json j = {{"action", e.action},       {"app", e.app},     {"stream", e.stream},
              {"alert", e.alert},         {"state", e.state}, {"value", e.value},
              {"threshold", e.threshold}, {"unit", e.unit},   {"server_id", e.server_id}};
    if (e.raised_unix_ms) j["raised_unix_ms"] = *e.raised_unix_ms;
    if (!e.reason.empty()) j["reason"] = e.reason;
    return j.dump(-1, ' ', false, json::error_handler_t::replace);
  }
  json params = json::object();
  for (auto& [k, v] : query_pairs(e.query)) {
    if (!params.contains(k)) params[k] = v;
  }
  json j = {{"action", e.action}, {"client_id", e.client_id},   {"address", e.address},   {"port", e.port},
            {"app", e.app},       {"stream", e.stream},         {"query", e.query},       {"params", params},
            {"tc_url", e.tc_url}, {"user_agent", e.user_agent}, {"protocol", e.protocol}, {"server_id", e.server_id}};
  if (e.duration_ms) j["duration_ms"] = *e.duration_ms;
  if (e.bytes_in) j["bytes_in"] = *e.bytes_in;
  if (e.bytes_out) j["bytes_out"] = *e.bytes_out;
  if (!e.reason.empty()) j["reason"] = e.reason;
  if (!e.path.empty()) j["path"] = e.path;
  if (!e.mp4_path.empty()) j["mp4_path"] = e.mp4_path;
  if (e.bytes) j["bytes"] = *e.bytes;
  if (e.started_unix) j["start"] = *e.started_unix;
  if (e.ended_unix) j["end"] = *e.ended_unix;
  if (!e.error.empty()) j["error"] = e.error;
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

void set_hook_peer(HookEvent& e, std::string_view peer) {
  size_t colon = peer.rfind(':');
  std::string_view host = colon == std::string_view::npos ? peer : peer.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  e.address = std::string(host);
  e.port = 0;
  if (colon != std::string_view::npos) {
    unsigned port = 0;
    for (char c : peer.substr(colon + 1)) {
      if (c < '0' || c > '9' || port > 65535) break;
      port = port * 10 + static_cast<unsigned>(c - '0');
    }
    e.port = port <= 65535 ? static_cast<uint16_t>(port) : 0;
  }
}

namespace {

// The body's JSON object, or an empty one (hooks may answer with no body or plain text).
json body_object(const std::string& body) {
  if (body.empty()) return json::object();
  json j = json::parse(body, nullptr, false);
  return j.is_object() ? j : json::object();
}

std::string string_field(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// A reason travels to the client in an onStatus description or an HTTP body: short, printable.
std::string safe_reason(std::string r) {
  if (r.size() > 200) r.resize(200);
  for (char& c : r) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  }
  return r;
}

}  // namespace

HookVerdict hook_verdict(const HookReply& reply, std::string_view hook_name, bool fail_open) {
  HookVerdict v;
  const std::string hook(hook_name);
  if (!reply.completed || reply.status >= 500 || reply.status < 200 || (reply.status >= 300 && reply.status < 400)) {
    v.failed = true;
    v.allowed = fail_open;
    v.reason = reply.completed ? "the " + hook + " hook answered HTTP " + std::to_string(reply.status)
                               : "the " + hook + " hook did not answer (" + reply.error + ")";
    return v;
  }
  json body = body_object(reply.body);
  v.reason = safe_reason(string_field(body, "reason"));
  if (reply.status >= 400) {
    if (v.reason.empty()) v.reason = "denied by the " + hook + " hook";
    return v;
  }
  v.allowed = true;
  v.name = string_field(body, "name");
  if (auto it = body.find("lifetime"); it != body.end() && it->is_number() && it->get<double>() > 0) {
    double s = it->get<double>();
    v.lifetime_s = s > 1e9 ? 1'000'000'000 : static_cast<uint64_t>(s + 0.999);
  }
  if (auto it = body.find("push"); it != body.end() && it->is_array()) {
    for (const json& t : *it) {
      if (v.push.size() >= 16) break;
      std::string url = t.is_string() ? t.get<std::string>() : t.is_object() ? string_field(t, "url") : "";
      std::string key = t.is_object() ? string_field(t, "key") : "";
      // A bad target is left out (the log of the relay says nothing of it: it never starts).
      if (!config::relay_url_problem(url).empty() || key.size() > 1024) continue;
      v.push.emplace_back(std::move(url), std::move(key));
    }
  }
  return v;
}

}  // namespace sluice::server
