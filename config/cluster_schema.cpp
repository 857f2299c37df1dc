#include "config/cluster_schema.hpp"

#include "config/access_schema.hpp"
#include "config/units.hpp"

namespace sluice::config {

namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// A node id is part of Redis keys and log lines: letters, digits, '-', '_' and '.'.
bool node_id_ok(std::string_view id) {
  if (id.empty() || id.size() > 64) return false;
  for (char c : id) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
    if (!ok) return false;
  }
  return true;
}

void read_advertised(FieldReader& r, const Field& f, std::string_view scheme, std::string& out) {
  std::string v;
  if (!r.read_string(f, v)) return;
  if (!v.starts_with(scheme) || v.size() == scheme.size() || v.find('/', scheme.size()) != std::string::npos) {
    return r.error(f, "must be " + std::string(scheme) + "HOST:PORT, the address other nodes reach this one at (got " +
                          in_quotes(v) + ")");
  }
  out = std::move(v);
}

void load_advertise(FieldReader& r, const Field& f, ClusterConfig& c) {
  if (!f.value.is_map()) return read_advertised(r, f, "rtmp://", c.advertise_rtmp);
  Section s(r, f, {"rtmp", "http"});
  if (!s.valid()) return;
  if (auto rtmp = s.take("rtmp")) read_advertised(r, *rtmp, "rtmp://", c.advertise_rtmp);
  if (auto http = s.take("http")) read_advertised(r, *http, "http://", c.advertise_http);
  if (c.advertise_rtmp.empty()) r.error(f, "needs rtmp: rtmp://HOST:PORT");
}

}  // namespace

const char* duplicate_publish_name(DuplicatePublish d) {
  return d == DuplicatePublish::Takeover ? "takeover" : "refuse";
}

void load_cluster(FieldReader& r, const Field& self, ClusterConfig& c, const std::string& fallback_node_id) {
  Section s(r, self,
            {"registry", "node_id", "advertise", "password", "password_file", "password_env", "token", "token_file",
             "token_env", "lease", "duplicate_publish"});
  if (!s.valid()) return;
  auto registry = s.take("registry");
  if (!registry) return r.error(self, "needs registry: redis://HOST:PORT/DB (leave cluster out for a single node)");
  std::string text, why;
  if (r.read_string(*registry, text)) {
    c.registry = RedisUrl::parse(text, why);
    if (!c.registry) r.error(*registry, why);  // the text is not echoed: it may hold a password
  }
  c.node_id = fallback_node_id;
  if (auto f = s.take("node_id")) {
    std::string id;
    if (r.read_string(*f, id)) {
      if (node_id_ok(id)) {
        c.node_id = id;
      } else {
        r.error(*f, "must be 1..64 letters, digits, '-', '_' or '.' (got " + in_quotes(id) + ")");
      }
    }
  } else if (!node_id_ok(c.node_id)) {
    r.error(self, "needs node_id: the host name " + in_quotes(c.node_id) + " cannot be one");
  }
  if (auto f = s.take("advertise")) {
    load_advertise(r, *f, c);
  } else {
    r.error(self, "needs advertise: rtmp://HOST:PORT, the address other nodes pull this node's streams from");
  }
  load_secret(r, s, self, "password", c.password);
  if (c.password.value.empty() && c.registry && !c.registry->password.empty()) {
    c.password = {c.registry->password, "inline"};
  }
  load_secret(r, s, self, "token", c.token);
  if (c.token.value.empty()) {
    r.error(self, "needs token (or token_file, token_env): the secret nodes present to pull from each other");
  }
  if (auto f = s.take("lease")) r.read_duration(*f, c.lease, seconds(2), seconds(300), false);
  if (auto f = s.take("duplicate_publish")) {
    r.read_choice(*f, "refuse or takeover",
                  {{"refuse", DuplicatePublish::Refuse}, {"takeover", DuplicatePublish::Takeover}},
                  c.duplicate_publish);
  }
}

}  // namespace sluice::config
