// What Sluice tells a hook and how it reads the answer (docs/security.md, "HTTP callbacks"). The
// transport is HookClient (hook_client.hpp); this file is pure data: unit-tested in
// tests/unit/server/access/hook_messages_test.cpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>
#include <string_view>

namespace sluice::server {

struct HookReply;

// One session event. Strings are as the client sent them (the JSON encoder replaces bytes that
// are not UTF-8).
struct HookEvent {
  std::string action;  // connect, publish, play, publish_done, play_done
  uint64_t client_id = 0;
  std::string address;  // peer IP (no port)
  uint16_t port = 0;
  std::string app;
  std::string stream;  // without the query
  std::string query;   // as received; also sent decoded as "params"
  std::string tc_url;
  std::string user_agent;  // RTMP flashVer, or the HTTP User-Agent
  std::string protocol;    // rtmp, http-flv, http
  std::string server_id;
  // *_done only.
  std::optional<uint64_t> duration_ms;
  std::optional<uint64_t> bytes_in;
  std::optional<uint64_t> bytes_out;
  std::string reason;  // why the session ended
  // record_done only.
  std::string path;
  std::string mp4_path;           // record.mp4: the MP4 copy, when it was written
  std::optional<uint64_t> bytes;  // the file's size
  std::optional<int64_t> started_unix;
  std::optional<int64_t> ended_unix;
  std::string error;  // a recording that failed
  // stream_alert only (server/api/stream_alerts.hpp): which, raised or cleared, the figure now
  // and the rule's threshold in `unit`, since when (raised), and why a clear came without the figure.
  std::string alert;
  std::string state;
  double value = 0;
  double threshold = 0;
  std::string unit;
  std::optional<int64_t> raised_unix_ms;
};

std::string hook_body(const HookEvent& e);

// Fills address and port from a socket's "1.2.3.4:5678" / "[::1]:5678" text.
void set_hook_peer(HookEvent& e, std::string_view peer_text);

// A decision hook's answer read against hooks.fail. 2xx admits; its JSON body may carry
// "name" (publish/play under this stream name instead) and "lifetime" (seconds: the session is
// closed after it). 4xx denies; other statuses, timeouts and unreachable hooks deny unless
// fail_open. A JSON "reason" (any status) is what a denied client is told.
struct HookVerdict {
  bool allowed = false;
  bool failed = false;      // no usable answer (the fail rule decided)
  std::string name;         // rename, empty: keep
  uint64_t lifetime_s = 0;  // 0: no limit
  std::string reason;       // for the client and the log
  // on_publish: more push targets for this publication, {"push": [{"url": ..., "key": ...}, ...]}
  // (or plain URL strings): (url, key) pairs, checked like apps.NAME.push URLs, at most 16.
  std::vector<std::pair<std::string, std::string>> push;
};

HookVerdict hook_verdict(const HookReply& reply, std::string_view hook_name, bool fail_open);

}  // namespace sluice::server
