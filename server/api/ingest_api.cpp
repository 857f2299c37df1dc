#include "server/api/ingest_api.hpp"

#include <nlohmann/json.hpp>

#include "config/config.hpp"
#include "server/api/api_json.hpp"
#include "server/api/api_view.hpp"

namespace sluice::server {

namespace {

using nlohmann::json;

// This build serves APP/STREAM/snapshot.jpg (server/snapshot/). Said so that the page asks for
// thumbnails only where they are served: a request answered 404 is an error in the browser's
// console.
constexpr bool kSnapshots = true;

json ports(const std::vector<config::ListenAddress>& listen) {
  json out = json::array();
  for (const config::ListenAddress& a : listen) out.push_back(a.port);
  return out;
}

// "key" (a key of keys or its stream's in stream_keys), "signed" (only a signed URL), or "none".
const char* credential(const config::AccessRules& rules) {
  if (!rules.keys.empty() || !rules.stream_keys.empty()) return "key";
  return rules.signed_url.enabled() ? "signed" : "none";
}

}  // namespace

HttpApiReply ingest_api(ApiView& server) {
  const config::Config& c = server.config();
  json apps = json::array();
  for (const config::AppConfig& app : c.apps) {
    if (app.type != config::AppType::Live) continue;
    apps.push_back(json{{"name", app.name},
                        {"publish_credential", credential(app.publish)},
                        {"play_credential", credential(app.play)}});
  }
  return json_reply(200, json{{"rtmp_ports", ports(c.rtmp.listen)},
                              {"rtmps_ports", ports(c.rtmps.listen)},
                              {"apps", apps},
                              {"snapshots", kSnapshots}});
}

}  // namespace sluice::server
