// RelayManager::on_config_changed: the relays follow a reloaded configuration (docs/configuration.md,
// "Reload"). A configured push target whose settings changed or went away stops (its target hears
// the end of the publish); the live publications then get the targets they lack. Always-on pulls
// start and stop to match; a pull whose app no longer pulls ends. An on-demand pull whose upstreams
// changed runs on until its players leave: the next one starts with the new upstreams.
#include <algorithm>

#include "server/relay/pull.hpp"
#include "server/relay/push_target.hpp"
#include "server/relay/relay_manager.hpp"

namespace sluice::server {

std::string relay_origin(const std::vector<std::string>& urls, const std::string& key, bool verify) {
  std::string s;
  for (const std::string& u : urls) s += u + '\n';
  return s + key + '\n' + (verify ? "verify" : "no-verify");
}

void RelayManager::on_config_changed() {
  if (stopped_) return;
  const config::Config& config = services_.loop.config();
  // A configured target (it has an origin; runtime and hook ones have none) the new file no longer
  // gives its stream, or gives with other settings, stops.
  std::erase_if(pushes_, [&](const auto& t) {
    if (t->origin().empty()) return false;
    const std::string& key = t->source_key();
    const size_t slash = key.find('/');
    const config::AppConfig* app = config.find_app(key.substr(0, slash));
    if (app != nullptr) {
      for (const ConfiguredPush& c : configured_pushes(*app, key.substr(slash + 1))) {
        if (c.id == t->target_id() && c.origin() == t->origin()) return false;
      }
    }
    t->stop("configuration reloaded");
    return true;
  });
  for (const Publication& p : std::vector<Publication>(publications_)) {
    if (const config::AppConfig* app = config.find_app(p.app)) start_config_pushes(*app, p.name, *p.hub);
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
