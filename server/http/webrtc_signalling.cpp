#include "server/http/webrtc_signalling.hpp"

#include <optional>
#include <string>

#include "server/access/gate.hpp"
#include "server/http/admission.hpp"
#include "server/http/connection.hpp"
#include "server/http/service.hpp"
#include "server/http/util.hpp"
#include "server/io/logging.hpp"
#include "server/webrtc/webrtc_service.hpp"

namespace sluice::server {

namespace {

namespace pw = protocol::webrtc;

constexpr std::string_view kWebrtcCors =
    "Access-Control-Allow-Origin: *\r\nAccess-Control-Expose-Headers: Location, ETag\r\n";

struct WebrtcTarget {
  std::string stream;
  pw::WebrtcRole role = pw::WebrtcRole::Whep;
  std::string session;  // DELETE's resource id; empty for the offer's path
};

// "cam/whep", "cam/whip", "cam/whep/ID".
std::optional<WebrtcTarget> parse_target(std::string_view rest) {
  WebrtcTarget t;
  size_t slash = rest.rfind('/');
  if (slash == std::string_view::npos) return std::nullopt;
  std::string_view last = rest.substr(slash + 1);
  std::string_view head = rest.substr(0, slash);
  if (last != "whip" && last != "whep") {
    // The resource: STREAM/whep/ID.
    t.session = std::string(last);
    slash = head.rfind('/');
    if (slash == std::string_view::npos) return std::nullopt;
    last = head.substr(slash + 1);
    head = head.substr(0, slash);
    if (last != "whip" && last != "whep") return std::nullopt;
  }
  if (head.empty()) return std::nullopt;
  t.role = last == "whip" ? pw::WebrtcRole::Whip : pw::WebrtcRole::Whep;
  t.stream = std::string(head);
  return t;
}

int status_of(const AccessOutcome& o) {
  if (o.refused_by == RefusedBy::Limit) return 503;
  if (o.refused_by == RefusedBy::Rules && o.denial == Denial::KeyMissing) return 401;
  return 403;
}

int status_of(const Error& e) {
  switch (e.code) {
    case Errc::LimitExceeded: return 503;
    case Errc::Unsupported: return 406;
    case Errc::NotFound: return 404;
    default: return 400;
  }
}

void answer_offer(HttpConnection& c, const config::AppConfig& app, const WebrtcTarget& t, HookEvent&& event,
                  AccessOutcome&& o) {
  const char* verb = t.role == pw::WebrtcRole::Whip ? "publish" : "play";
  if (!o.allowed()) {
    SLUICE_LOG_WARN("conn={} proto=webrtc peer={} event={}_rejected app={} stream=\"{}\" reason=\"{}\"", c.id(),
                    c.peer(), verb, app.name, printable(t.stream), o.reason);
    return c.send_error(status_of(o), "not allowed: " + o.reason, false, kWebrtcCors);
  }
  WebrtcService* webrtc = c.service().webrtc();
  if (webrtc == nullptr) return c.send_error(404, "WebRTC is off (webrtc.listen)", false, kWebrtcCors);
  std::string name = o.name;
  event.stream = name;
  WebrtcService::Offer offer{t.role, &app, name, c.request().body, std::move(o), std::move(event)};
  auto answer = webrtc->open(std::move(offer));
  if (!answer) {
    SLUICE_LOG_WARN("conn={} proto=webrtc peer={} event={}_rejected app={} stream=\"{}\" reason=\"{}\"", c.id(),
                    c.peer(), verb, app.name, printable(t.stream), answer.error().message());
    return c.send_error(status_of(answer.error()), answer.error().message(), false, kWebrtcCors);
  }
  const std::string location =
      "/" + app.name + "/" + name + (t.role == pw::WebrtcRole::Whip ? "/whip/" : "/whep/") + answer->session_id;
  c.send_simple(201, "application/sdp", answer->sdp,
                "Location: " + location + "\r\nETag: \"" + answer->session_id + "\"\r\n" + std::string(kWebrtcCors));
}

void offer(HttpConnection& c, const config::AppConfig& app, const WebrtcTarget& t) {
  const HttpRequest& req = c.request();
  const std::string* type = req.header("content-type");
  if (type == nullptr || !type->starts_with("application/sdp")) {
    return c.send_error(415, "an offer is Content-Type: application/sdp", false, kWebrtcCors);
  }
  if (req.body.empty()) return c.send_error(400, "the offer is empty", false, kWebrtcCors);
  HookEvent event;
  event.client_id = c.id();
  event.app = app.name;
  event.stream = t.stream;
  event.query = req.query;
  event.protocol = "webrtc";
  set_hook_peer(event, c.peer());
  if (const std::string* auth = req.header("authorization"); auth && auth->starts_with("Bearer ")) {
    // WHIP's key: the rules read it where RTMP's ?key= is.
    event.query += (event.query.empty() ? "key=" : "&key=") + auth->substr(7);
  }
  if (const std::string* ua = req.header("user-agent")) event.user_agent = *ua;
  const AccessAction action = t.role == pw::WebrtcRole::Whip ? AccessAction::Publish : AccessAction::Play;
  AccessGate& gate = c.service().gate();
  // While a hook decides, the request (and its offer) waits; closing the connection cancels it.
  auto& waiting = c.respond<AdmissionResponder>(gate);
  HookEvent asked = event;  // the gate's copy; the callback keeps the other for the session's tickets
  const uint64_t id =
      gate.admit(action, app, c.peer_address(), std::move(asked),
                 [conn = &c, app = c.loop_context().keep(app), t, event = std::move(event)](AccessOutcome&& o) mutable {
                   answer_offer(*conn, *app, t, std::move(event), std::move(o));
                 });
  // Answered at once, `waiting` may be gone already (replaced by the answer).
  if (id != 0) waiting.wait_for(id);
}

}  // namespace

bool http_route_webrtc(HttpConnection& c, const config::AppConfig& app, std::string_view rest) {
  if (app.type != config::AppType::Live) return false;
  std::optional<WebrtcTarget> t = parse_target(rest);
  if (!t) return false;
  const std::string& method = c.request().method;
  if (method == "OPTIONS") {
    c.send_simple(204, {}, {},
                  "Allow: POST, DELETE, OPTIONS\r\nAccess-Control-Allow-Origin: *\r\n"
                  "Access-Control-Allow-Methods: POST, DELETE, OPTIONS\r\n"
                  "Access-Control-Allow-Headers: Authorization, Content-Type, If-Match\r\n"
                  "Access-Control-Expose-Headers: Location, ETag\r\nAccess-Control-Max-Age: 86400\r\n");
    return true;
  }
  if (t->session.empty()) {
    if (method != "POST") {
      c.send_error(405, "offer with POST", false, "Allow: POST, OPTIONS\r\n" + std::string(kWebrtcCors));
      return true;
    }
    offer(c, app, *t);
    return true;
  }
  if (method != "DELETE") {
    c.send_error(405, "end the session with DELETE", false, "Allow: DELETE, OPTIONS\r\n" + std::string(kWebrtcCors));
    return true;
  }
  WebrtcService* webrtc = c.service().webrtc();
  if (webrtc == nullptr || webrtc->end(t->session, "DELETE from the client") == WebrtcService::End::Unknown) {
    c.send_error(404, "no such session", false, kWebrtcCors);
    return true;
  }
  c.send_simple(200, {}, {}, kWebrtcCors);
  return true;
}

}  // namespace sluice::server
