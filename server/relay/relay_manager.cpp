#include "server/relay/relay_manager.hpp"

#include <algorithm>
#include <cctype>

#include "server/io/logging.hpp"
#include "server/io/uv_handle.hpp"
#include "server/relay/pull.hpp"
#include "server/relay/push_target.hpp"
#include "server/relay/runtime_targets.hpp"

namespace sluice::server {

namespace {
constexpr uint64_t kTickMs = 250;

std::shared_ptr<const TlsContext> client_context(bool verify) {
  auto ctx = TlsContext::client(verify);
  if (!ctx) {
    SLUICE_LOG_ERROR("event=relay_tls_unavailable verify={} error=\"{}\"", verify, ctx.error().message());
    return nullptr;
  }
  return *ctx;
}

std::vector<RelayUrl> parse_urls(const std::vector<std::string>& urls) {
  std::vector<RelayUrl> out;
  for (const std::string& u : urls) {
    if (auto parsed = RelayUrl::parse(u)) out.push_back(std::move(*parsed));
  }
  return out;
}

// A token may hold any byte: in a query it is %XX-escaped except for the unreserved characters.
std::string percent_encoded(const std::string& text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

// What every pull of app/name shares, configured or a cluster's.
Pull::Settings pull_settings(const config::AppConfig& app, const std::string& name) {
  Pull::Settings s;
  s.key = app.name + "/" + name;
  s.name = name;
  s.idle_ms = static_cast<uint64_t>(app.relay.pull.idle.count());
  s.verify = app.relay.pull.verify;
  s.timestamp_jump_ms = static_cast<uint32_t>(app.timestamp_jump.count());
  s.hub = hub_options(app);
  return s;
}

}  // namespace

bool relay_selects(const std::vector<std::string>& streams, const std::string& name) {
  return streams.empty() || std::find(streams.begin(), streams.end(), name) != streams.end();
}

RelayManager::RelayManager(LoopContext& loop, StreamRegistry& registry, WorkerMesh* mesh, uint32_t worker)
    : services_{loop, registry, client_context(true), client_context(false), &draining_, {}},
      mesh_(mesh),
      worker_(worker) {}

RelayManager::~RelayManager() {
  // Targets first: they hold the hubs the pulls publish.
  pushes_.clear();
  pulls_.clear();
}

void RelayManager::start() {
  uv_timer_init(services_.loop.loop(), &timer_);
  timer_.data = this;
  uv_timer_start(&timer_, &RelayManager::on_timer, kTickMs, kTickMs);
  timer_started_ = true;
  runtime_generation_ = RuntimeTargets::instance().generation();
  if (worker_ != 0) return;
  for (const config::AppConfig& app : services_.loop.config().apps) {
    if (!app.relay.pull.enabled() || app.relay.pull.on_demand) continue;
    for (const std::string& name : app.relay.pull.streams) start_pull(app, name);
  }
}

void RelayManager::stop() {
  if (stopped_) return;
  stopped_ = true;
  for (auto& p : pushes_) p->stop("server stopping");
  for (auto& p : pulls_) p->end("server stopping");
  pushes_.clear();
  pulls_.clear();
  // The timer goes once the pushes' ends are out (tick()).
  if (draining_.empty() && timer_started_) {
    timer_started_ = false;
    close_handle(&timer_);
  }
}

void RelayManager::close_all(const std::string& why) {
  draining_.close_all(why);
  if (timer_started_) {
    timer_started_ = false;
    close_handle(&timer_);
  }
}

void RelayManager::on_timer(uv_timer_t* t) { static_cast<RelayManager*>(t->data)->tick(); }

void RelayManager::tick() {
  const uint64_t now = services_.loop.now_ms();
  draining_.on_tick(now);
  if (stopped_) {
    if (draining_.empty() && timer_started_) {
      timer_started_ = false;
      close_handle(&timer_);
    }
    return;
  }
  if (RuntimeTargets::instance().generation() != runtime_generation_) sync_runtime_targets();
  for (size_t i = 0; i < pushes_.size(); ++i) pushes_[i]->on_tick(now);
  for (size_t i = 0; i < pulls_.size(); ++i) pulls_[i]->on_tick(now);
  std::erase_if(pulls_, [](const auto& p) { return p->ended(); });
}

PushTarget* RelayManager::add_push(const std::string& target_id, const std::vector<std::string>& urls,
                                   const std::string& key_secret, bool verify, const config::AppConfig& app,
                                   const std::string& name, media::StreamHub& hub) {
  std::vector<RelayUrl> parsed = parse_urls(urls);
  if (parsed.empty()) return nullptr;
  const std::string publish_name = parsed.front().stream_name(name, key_secret);
  auto t = std::make_unique<PushTarget>(services_, target_id, std::move(parsed), publish_name, !key_secret.empty(),
                                        verify, app.name + "/" + name, hub);
  PushTarget* raw = t.get();
  pushes_.push_back(std::move(t));
  raw->start();
  return raw;
}

bool RelayManager::pushing(const std::string& target_id, const std::string& key) const {
  return std::any_of(pushes_.begin(), pushes_.end(),
                     [&](const auto& t) { return t->target_id() == target_id && t->source_key() == key; });
}

std::vector<ConfiguredPush> configured_pushes(const config::AppConfig& app, const std::string& name) {
  std::vector<ConfiguredPush> out;
  if (app.type != config::AppType::Live) return out;
  for (size_t i = 0; i < app.relay.push.size(); ++i) {
    const config::PushTargetConfig& t = app.relay.push[i];
    if (relay_selects(t.streams, name))
      out.push_back({app.name + "#" + std::to_string(i), {t.url}, t.key.value, t.verify});
  }
  if (app.relay.edge) out.push_back({app.name + "#origin", app.relay.pull.upstreams, "", app.relay.pull.verify});
  return out;
}

void RelayManager::start_config_pushes(const config::AppConfig& app, const std::string& name, media::StreamHub& hub) {
  const std::string key = app.name + "/" + name;
  for (const ConfiguredPush& t : configured_pushes(app, name)) {
    if (pushing(t.id, key)) continue;
    // Marked as the configuration's, with what it said: a reload compares (relay_reload.cpp).
    if (PushTarget* p = add_push(t.id, t.urls, t.key, t.verify, app, name, hub)) p->set_origin(t.origin());
  }
}

void RelayManager::on_publish_start(const config::AppConfig& app, const std::string& name, media::StreamHub& hub,
                                    const std::vector<std::pair<std::string, std::string>>& extra) {
  if (stopped_) return;
  const std::string key = app.name + "/" + name;
  on_publish_end(key);  // a republish on the same name starts its targets afresh
  publications_.push_back({app.name, name, &hub});
  start_config_pushes(app, name, hub);
  for (const RuntimeTarget& t : RuntimeTargets::instance().list()) {
    if (t.app == app.name && relay_selects(t.streams, name)) add_push(t.id, {t.url}, t.key, true, app, name, hub);
  }
  for (size_t i = 0; i < extra.size(); ++i) {
    add_push(app.name + "#hook" + std::to_string(i), {extra[i].first}, extra[i].second, true, app, name, hub);
  }
}

void RelayManager::on_publish_end(const std::string& key) {
  std::erase_if(publications_, [&](const Publication& p) { return p.app + "/" + p.name == key; });
  // A live target sends FCUnpublish + deleteStream behind its frames.
  std::erase_if(pushes_, [&](const auto& t) {
    if (t->source_key() != key) return false;
    t->stop("source ended");
    return true;
  });
}

void RelayManager::sync_runtime_targets() {
  runtime_generation_ = RuntimeTargets::instance().generation();
  const std::vector<RuntimeTarget> list = RuntimeTargets::instance().list();
  auto listed = [&](const std::string& id) {
    return std::any_of(list.begin(), list.end(), [&](const RuntimeTarget& t) { return t.id == id; });
  };
  // Runtime ids ("r1") have no '#'; the config's and the hook's ("app#0", "app#hook0") do.
  auto runtime_id = [](const std::string& id) { return id.find('#') == std::string::npos; };
  std::erase_if(pushes_, [&](const auto& t) {
    if (!runtime_id(t->target_id()) || listed(t->target_id())) return false;
    t->stop("removed through the API");
    return true;
  });
  for (const RuntimeTarget& t : list) {
    const config::AppConfig* app = services_.loop.config().find_app(t.app);
    if (!app) continue;
    for (const Publication& p : std::vector<Publication>(publications_)) {
      if (p.app != t.app || !relay_selects(t.streams, p.name)) continue;
      const std::string key = p.app + "/" + p.name;
      const bool running = std::any_of(pushes_.begin(), pushes_.end(),
                                       [&](const auto& x) { return x->target_id() == t.id && x->source_key() == key; });
      if (!running) add_push(t.id, {t.url}, t.key, true, *app, p.name, *p.hub);
    }
  }
}

bool RelayManager::want(const config::AppConfig& app, const std::string& name) {
  const config::PullConfig& pull = app.relay.pull;
  if (stopped_) return false;
  const bool configured = pull.enabled() && pull.on_demand && relay_selects(pull.streams, name);
  // An app with upstreams of its own (or always-on pulls) is not looked up in the cluster.
  const bool clustered = !pull.enabled() && cluster_.has_value();
  if (!configured && !clustered) return false;
  if (worker_ == 0) {
    if (configured) {
      start_pull(app, name);
    } else {
      start_cluster_pull(app, name);
    }
  } else if (mesh_) {
    auto e = std::make_unique<MeshEvent>();
    e->kind = MeshEvent::Kind::PullWanted;
    e->from = worker_;
    e->key = app.name + "/" + name;
    mesh_->post(0, std::move(e));
  }
  return true;
}

void RelayManager::on_pull_wanted(const MeshEvent& e) {
  if (!e.continues) {
    const size_t slash = e.key.find('/');
    if (slash == std::string::npos) return;
    const config::AppConfig* app = services_.loop.config().find_app(e.key.substr(0, slash));
    if (app) want(*app, e.key.substr(slash + 1));
    return;
  }
  Handover h;
  h.takeovers = static_cast<uint32_t>(e.id);
  h.continue_after = e.timestamp;
  if (!follow(e.key, h)) services_.registry.end_abandoned_publication(e.key);
}

bool RelayManager::follow(const std::string& key, const Handover& handover) {
  const size_t slash = key.find('/');
  const config::AppConfig* app = services_.loop.config().find_app(key.substr(0, slash));
  if (stopped_ || !cluster_ || slash == std::string::npos || !app || app->relay.pull.enabled()) return false;
  if (worker_ == 0) return start_cluster_pull(*app, key.substr(slash + 1), handover);
  if (!mesh_) return false;
  auto e = std::make_unique<MeshEvent>();
  e->kind = MeshEvent::Kind::PullWanted;
  e->from = worker_;
  e->key = key;
  e->continues = true;
  e->timestamp = handover.continue_after.value_or(0);
  e->id = handover.takeovers;
  mesh_->post(0, std::move(e));
  return true;
}

Pull* RelayManager::find_pull(const std::string& key) const {
  for (const auto& p : pulls_) {
    if (p->key() == key && !p->ended()) return p.get();
  }
  return nullptr;
}

bool RelayManager::start_cluster_pull(const config::AppConfig& app, const std::string& name, const Handover& follows) {
  const std::string key = app.name + "/" + name;
  if (!cluster_ || !cluster_->locate || find_pull(key)) return false;
  Pull::Settings s = pull_settings(app, name);
  s.follows = follows;
  s.locate = cluster_->locate;
  if (!cluster_->token.empty())
    s.query = std::string(config::kClusterTokenParam) + "=" + percent_encoded(cluster_->token);
  s.on_demand = true;
  auto p = std::make_unique<Pull>(services_, std::move(s));
  Pull* raw = p.get();
  pulls_.push_back(std::move(p));
  raw->start();
  return true;
}

void RelayManager::start_pull(const config::AppConfig& app, const std::string& name) {
  const std::string key = app.name + "/" + name;
  if (find_pull(key)) return;
  Pull::Settings s = pull_settings(app, name);
  s.upstreams = parse_urls(app.relay.pull.upstreams);
  if (s.upstreams.empty()) return;
  s.on_demand = app.relay.pull.on_demand;
  s.origin = relay_origin(app.relay.pull.upstreams, "", app.relay.pull.verify);
  auto p = std::make_unique<Pull>(services_, std::move(s));
  Pull* raw = p.get();
  pulls_.push_back(std::move(p));
  raw->start();
}

nlohmann::json RelayManager::status() const {
  nlohmann::json push = nlohmann::json::array();
  nlohmann::json pull = nlohmann::json::array();
  for (const auto& t : pushes_) {
    nlohmann::json j = t->status();
    j["worker"] = worker_;
    push.push_back(std::move(j));
  }
  for (const auto& p : pulls_) {
    nlohmann::json j = p->status();
    j["worker"] = worker_;
    pull.push_back(std::move(j));
  }
  return nlohmann::json{{"push", push}, {"pull", pull}};
}

}  // namespace sluice::server
