#include "server/sign_command.hpp"

#include <iostream>

#include "config/load.hpp"
#include "config/units.hpp"
#include "server/access/gate.hpp"
#include "server/access/signature.hpp"

namespace sluice::server {

int run_sign_command(const SignOptions& o) {
  auto cfg = o.config_path.empty() ? config::load_default() : config::load_file(o.config_path);
  if (!cfg) {
    std::cerr << "sluice sign: invalid configuration:\n" << cfg.error().context << "\n";
    return 2;
  }
  const config::AppConfig* app = cfg->find_app(o.app);
  if (!app) {
    std::cerr << "sluice sign: no app '" << o.app << "' in " << cfg->source << "\n";
    return 2;
  }
  if (o.action != "play" && o.action != "publish") {
    std::cerr << "sluice sign: --action is play or publish\n";
    return 2;
  }
  const config::AccessRules& rules = o.action == "publish" ? app->publish : app->play;
  if (!rules.signed_url.enabled()) {
    std::cerr << "sluice sign: apps." << o.app << "." << o.action << ".signed has no secret in " << cfg->source << "\n";
    return 2;
  }
  auto ttl = config::parse_duration(o.ttl);
  if (!ttl || ttl->count() <= 0) {
    std::cerr << "sluice sign: --ttl is a duration such as 30m or 2h (got '" << o.ttl << "')\n";
    return 2;
  }
  const int64_t expires = (o.now_s != 0 ? o.now_s : unix_now()) + ttl->count() / 1000;
  std::string url = o.url;
  if (url.empty()) {
    uint16_t port = cfg->rtmp.listen.empty() ? 1935 : cfg->rtmp.listen.front().port;
    url = "rtmp://127.0.0.1:" + std::to_string(port) + "/" + o.app + "/" + o.stream;
  }
  url += url.find('?') == std::string::npos ? "?" : "&";
  url += "expires=" + std::to_string(expires) +
         "&sign=" + url_signature(rules.signed_url.secret.value, o.action, o.app, o.stream, expires);
  std::cout << url << "\n";
  return 0;
}

}  // namespace sluice::server
