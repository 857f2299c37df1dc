// RelayManager::on_config_changed: the relays follow a reloaded configuration (docs/configuration.md,
// "Reload"). A configured push target whose settings changed or went away stops (its target hears
// the end of the publish); the live publications then get the targets they lack. Always-on pulls
// start and stop to match; a pull whose app no longer pulls ends. An on-demand pull whose upstreams
// changed runs on until its players leave: the next one starts with the new upstreams.
#include <algorithm>
#include <cctype>

#include "server/relay/pull.hpp"
#include "server/relay/push_target.hpp"
#include "server/relay/relay_manager.hpp"

namespace sluice::server {

namespace {

// A target the configuration made: "app#3" (apps.app.push[3]) or "app#origin" (an edge's), not a
// runtime ("r1") or hook ("app#hook0") one.
bool configured_target(const std::string& id, std::string& app, std::string& which) {
  const size_t hash = id.find('#');
  if (hash == std::string::npos) return false;
  app = id.substr(0, hash);
  which = id.substr(hash + 1);
  if (which == "origin") return true;
  return !which.empty() && std::all_of(which.begin(), which.end(), [](char c) { return std::isdigit(c) != 0; });
}

// What `config` says of target `which` of `app` for stream `name`, as add_push would start it;
// empty when it has no such target for that stream.
std::string wanted_origin(const config::Config& config, const std::string& app_name, const std::string& which,
                          const std::string& name) {
  const config::AppConfig* app = config.find_app(app_name);
  if (app == nullptr || app->type != config::AppType::Live) return {};
  if (which == "origin") {
    return app->relay.edge ? relay_origin(app->relay.pull.upstreams, "", app->relay.pull.verify) : std::string();
  }
  const size_t i = std::stoul(which);
  if (i >= app->relay.push.size() || !relay_selects(app->relay.push[i].streams, name)) return {};
  const config::PushTargetConfig& t = app->relay.push[i];
  return relay_origin({t.url}, t.key.value, t.verify);
}

}  // namespace

std::string relay_origin(const std::vector<std::string>& urls, const std::string& key, bool verify) {
  std::string s;
  for (const std::string& u : urls) s += u + '\n';
  return s + key + '\n' + (verify ? "verify" : "no-verify");
}

void RelayManager::on_config_changed() {
  if (stopped_) return;
  const config::Config& config = services_.loop.config();
  std::erase_if(pushes_, [&](const auto& t) {
    std::string app, which;
    if (!configured_target(t->target_id(), app, which)) return false;
    const std::string name = t->source_key().substr(t->source_key().find('/') + 1);
    if (wanted_origin(config, app, which, name) == t->origin()) return false;
    t->stop("configuration reloaded");
    return true;
  });
  for (const Publication& p : std::vector<Publication>(publications_)) {
    const config::AppConfig* app = config.find_app(p.app);
    if (app != nullptr && app->type == config::AppType::Live) start_config_pushes(*app, p.name, *p.hub);
  }
  if (worker_ == 0) match_pulls(config);
}

void RelayManager::match_pulls(const config::Config& config) {
  for (const auto& p : pulls_) {
    const Pull::Settings& s = p->settings();
    if (s.locate || p->ended()) continue;  // a cluster pull follows the registry, not the file
    const config::AppConfig* app = config.find_app(s.key.substr(0, s.key.find('/')));
    const config::PullConfig* pull = app != nullptr ? &app->relay.pull : nullptr;
    const bool always_on = pull && pull->enabled() && !pull->on_demand &&
                           std::find(pull->streams.begin(), pull->streams.end(), s.name) != pull->streams.end();
    const std::string origin = pull ? relay_origin(pull->upstreams, "", pull->verify) : std::string();
    const char* why = nullptr;
    if (pull == nullptr || !pull->enabled()) {
      why = "its app no longer pulls";
    } else if (!s.on_demand && !always_on) {
      why = "no longer pulled always";
    } else if (!s.on_demand && origin != s.origin) {
      why = "its upstreams changed";
    }
    if (why != nullptr) p->end(std::string("configuration reloaded: ") + why);
  }
  std::erase_if(pulls_, [](const auto& p) { return p->ended(); });
  for (const config::AppConfig& app : config.apps) {
    if (!app.relay.pull.enabled() || app.relay.pull.on_demand) continue;
    for (const std::string& name : app.relay.pull.streams) start_pull(app, name);
  }
}

}  // namespace sluice::server
