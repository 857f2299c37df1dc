#include "server/http/routes.hpp"

#include <string>
#include <string_view>

#include "server/http/admission.hpp"
#include "server/http/api_responder.hpp"
#include "server/http/connection.hpp"
#include "server/http/file_responder.hpp"
#include "server/http/flv_responder.hpp"
#include "server/http/hls_responder.hpp"
#include "server/http/page.hpp"
#include "server/http/simple_responder.hpp"
#include "server/http/upload_responder.hpp"
#include "server/http/util.hpp"
#include "server/http/webrtc_signalling.hpp"

namespace sluice::server {

namespace {
constexpr std::string_view kSnapshotSuffix = "/snapshot.jpg";
constexpr std::string_view kWebpSuffix = "/snapshot.webp";
}  // namespace

void http_route(HttpConnection& c) {
  const HttpRequest& req = c.request();
  const std::string& path = req.path;
  if (path.empty() || path.front() != '/') {
    if (path == "*" && req.method == "OPTIONS") {
      return c.respond<SimpleResponder>().reply(204, {}, {}, "Allow: GET, HEAD, OPTIONS\r\n");
    }
    return c.respond<SimpleResponder>().error(400, "bad request target");
  }
  if (path == "/metrics" || path == "/healthz" || path == "/readyz" || path == "/api" || path.starts_with("/api/")) {
    return c.respond<ApiResponder>().start();
  }
  if (auto r = http_page_reply(req)) {
    return c.respond<SimpleResponder>().reply(r->status, r->content_type, r->body, r->headers);
  }
  // "/{app}/{rest}": the app is the first segment, as in rtmp://host/{app}/{stream}.
  size_t slash = path.find('/', 1);
  std::string app_name;
  if (slash == std::string::npos || !http_percent_decode(std::string_view(path).substr(1, slash - 1), app_name)) {
    return c.respond<SimpleResponder>().error(404, "no such resource");
  }
  const config::Config& config = c.loop_context().config();
  const config::AppConfig* app = config.find_app(app_name);
  if (!app) return c.respond<SimpleResponder>().error(404, "no such app", kHttpCors);
  std::string_view rest = std::string_view(path).substr(slash + 1);
  if (app->type == config::AppType::Live &&
      (rest.find("/whip") != std::string_view::npos || rest.find("/whep") != std::string_view::npos)) {
    std::string target;
    if (http_percent_decode(rest, target) && http_route_webrtc(c, *app, target)) return;
  }
  // PUT uploads into VOD apps, when a token is configured.
  bool put = app->type == config::AppType::Vod && !config.http.upload_token.empty();
  if (req.method == "OPTIONS") return c.respond<SimpleResponder>().preflight(put);
  if (req.method == "PUT" && put) return c.respond<UploadResponder>().start(*app, rest);
  if (req.method != "GET" && req.method != "HEAD") return c.respond<SimpleResponder>().method_not_allowed(put);
  std::string decoded;
  if (!http_percent_decode(rest, decoded))
    return c.respond<SimpleResponder>().error(400, "bad percent-encoding", kHttpCors);
  if (app->type == config::AppType::Live) {
    for (std::string_view suffix : {kSnapshotSuffix, kWebpSuffix}) {
      if (decoded.ends_with(suffix) && decoded.size() > suffix.size()) {
        decoded.resize(decoded.size() - suffix.size());
        return http_admit_snapshot(c, *app, std::move(decoded), suffix == kWebpSuffix);
      }
    }
    std::string stream, file;
    if (app->hls.enabled && http_hls_target(decoded, stream, file)) {
      return http_admit_hls(c, *app, std::move(stream), std::move(file));
    }
    if (!decoded.ends_with(".flv")) {
      return c.respond<SimpleResponder>().error(404, "live streams are served as /{app}/{stream}.flv", kHttpCors);
    }
    decoded.resize(decoded.size() - 4);
  }
  http_admit_play(c, *app, std::move(decoded));
}

}  // namespace sluice::server
