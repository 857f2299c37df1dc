#include "config/relay_schema.hpp"

#include "config/access_schema.hpp"
#include "config/relay_url.hpp"

namespace sluice::config {

std::string relay_url_problem(std::string_view url) {
  if (!url.starts_with("rtmp://") && !url.starts_with("rtmps://") && !url.starts_with("srt://")) {
    return "must start with rtmp://, rtmps:// or srt://";
  }
  if (url.size() > 2048) return "is longer than 2048 bytes";
  for (char c : url) {
    if (static_cast<unsigned char>(c) <= 0x20 || static_cast<unsigned char>(c) >= 0x7f) {
      return "may only hold visible ASCII characters";
    }
  }
  if (url.starts_with("srt://")) {
    if (RelayUrl::parse(url)) return "";
    return "is not srt://host:port?streamid=ID[&passphrase=P][&latency=MS][&pbkeylen=16|24|32] (a stream id of 1..512 "
           "bytes, percent-encoded; a passphrase of 10..79 characters; a latency of 20..10000 ms; no other setting)";
  }
  std::string_view rest = url.substr(url.find("//") + 2);
  const size_t slash = rest.find('/');
  if (slash == 0 || rest.empty()) return "has no host";
  if (slash == std::string_view::npos || slash + 1 >= rest.size() || rest[slash + 1] == '/' || rest[slash + 1] == '?') {
    return "has no app (rtmp://host[:port]/app/...)";
  }
  if (!RelayUrl::parse(url)) {
    return "is not rtmp[s]://host[:port]/app[/name] (no user@, a port 1..65535, IPv6 hosts in [brackets])";
  }
  return "";
}

namespace {

bool read_url(FieldReader& r, const Field& f, std::string& out) {
  if (!r.read_string(f, out)) return false;
  if (std::string why = relay_url_problem(out); !why.empty()) {
    r.error(f, in_quotes(out) + " " + why);
    return false;
  }
  return true;
}

bool read_urls(FieldReader& r, const Field& f, std::vector<std::string>& out) {
  bool ok = true;
  for (const Field& item : r.items(f, "a URL or a list of URLs")) {
    std::string url;
    if (read_url(r, item, url)) {
      out.push_back(std::move(url));
    } else {
      ok = false;
    }
  }
  if (ok && out.empty()) {
    r.error(f, "needs at least one URL");
    return false;
  }
  return ok;
}

}  // namespace

void load_push(FieldReader& r, const Field& self, RelayConfig& relay) {
  for (const Field& item : r.items(self, "a list of { url, key | key_file | key_env, streams }")) {
    Section s(r, item, {"url", "key", "key_file", "key_env", "streams", "verify"});
    if (!s.valid()) continue;
    PushTargetConfig t;
    auto url = s.take("url");
    if (!url) {
      r.error(item, "each push target needs a url");
      continue;
    }
    if (!read_url(r, *url, t.url)) continue;
    load_secret(r, s, item, "key", t.key);
    if (auto f = s.take("streams")) r.read_string_list(*f, t.streams);
    if (auto f = s.take("verify")) r.read_bool(*f, t.verify);
    relay.push.push_back(std::move(t));
  }
  if (relay.push.size() > 64) r.error(self, "at most 64 push targets per app");
}

void load_pull(FieldReader& r, const Field& self, RelayConfig& relay) {
  Section s(r, self, {"upstreams", "on_demand", "idle", "streams", "verify"});
  if (!s.valid()) return;
  PullConfig& p = relay.pull;
  if (auto f = s.take("upstreams")) {
    read_urls(r, *f, p.upstreams);
  } else {
    r.error(self, "needs upstreams (a list of rtmp://, rtmps:// or srt:// URLs)");
  }
  if (auto f = s.take("on_demand")) r.read_bool(*f, p.on_demand);
  if (auto f = s.take("idle")) r.read_duration(*f, p.idle, std::chrono::seconds(0), std::chrono::hours(24), true);
  if (auto f = s.take("streams")) r.read_string_list(*f, p.streams);
  if (auto f = s.take("verify")) r.read_bool(*f, p.verify);
  if (!p.on_demand && p.streams.empty()) r.error(self, "on_demand: false needs the names to pull always (streams)");
}

void load_edge_origins(FieldReader& r, const Field& self, RelayConfig& relay) {
  relay.edge = true;
  relay.pull.on_demand = true;
  read_urls(r, self, relay.pull.upstreams);
}

}  // namespace sluice::config
