#include "server/http/admission.hpp"

#include <optional>

#include "server/access/access_ticket.hpp"
#include "server/access/gate.hpp"
#include "server/access/policy.hpp"
#include "server/access/query.hpp"
#include "server/access_log/access_log.hpp"
#include "server/http/connection.hpp"
#include "server/http/file_responder.hpp"
#include "server/http/flv_responder.hpp"
#include "server/http/hls_responder.hpp"
#include "server/http/service.hpp"
#include "server/http/snapshot_responder.hpp"
#include "server/http/util.hpp"
#include "server/io/guard_counters.hpp"
#include "server/io/logging.hpp"
#include "server/live/stream_registry.hpp"
#include "server/snapshot/jpeg_maker.hpp"

namespace sluice::server {

namespace {

// for_hooks: the event goes to a play or play_done hook, which gets the whole description of the
// client. Without one, the gate reads only the stream and the query (its rules), so the address,
// URL and agent are left out: building them is most of the cost of admitting a small download.
HookEvent http_hook_event(HttpConnection& c, const config::AppConfig& app, const std::string& name, bool for_hooks) {
  const HttpRequest& req = c.request();
  HookEvent e;
  e.client_id = c.id();
  e.app = app.name;
  e.stream = name;
  e.query = req.query;
  e.protocol = app.type == config::AppType::Live ? "http-flv" : "http";
  if (!for_hooks) return e;
  set_hook_peer(e, c.peer());
  if (const std::string* host = req.header("host")) e.tc_url = "http://" + *host + req.path;
  if (const std::string* ua = req.header("user-agent")) e.user_agent = *ua;
  return e;
}

// 401 when the client did not present what is needed, 403 when what it presented is refused,
// 503 at a limit.
int status_of(const AccessOutcome& o) {
  if (o.refused_by == RefusedBy::Limit) return 503;
  if (o.refused_by == RefusedBy::Rules && o.denial == Denial::KeyMissing) return 401;
  return 403;
}

void admitted(HttpConnection& c, const config::AppConfig& app, HookEvent&& event, AccessOutcome&& o) {
  if (!o.allowed()) {
    SLUICE_LOG_WARN("conn={} proto=http peer={} event=play_rejected app={} stream=\"{}\" reason=\"{}\"", c.id(),
                    c.peer(), app.name, printable(event.stream), o.reason);
    return c.send_error(status_of(o), "not allowed: " + o.reason, false, kHttpCors);
  }
  AccessTicket ticket(c.service().gate(), AccessAction::Play, std::move(event), std::move(o.seat), c, c.loop_context());
  if (app.type == config::AppType::Live) return c.respond<FlvResponder>().start(app, o.name, std::move(ticket));
  c.respond<FileResponder>().start(app, o.name, std::move(ticket));
}

}  // namespace

void http_admit_play(HttpConnection& c, const config::AppConfig& app, std::string name) {
  AccessGate& gate = c.service().gate();
  const auto& hooks = gate.config().hooks;
  HookEvent event = http_hook_event(c, app, name, !hooks.on_play.empty() || !hooks.on_play_done.empty());
  if (hooks.on_play.empty()) {
    // No hook to wait for: the gate answers inside admit() (gate.hpp), so nothing has to hold the
    // request meanwhile, and the callback is small enough to need no allocation.
    std::optional<AccessOutcome> outcome;
    gate.admit(AccessAction::Play, app, c.peer_address(), event,
               [&outcome](AccessOutcome&& o) { outcome = std::move(o); });
    if (outcome) return admitted(c, app, std::move(event), std::move(*outcome));
    return c.send_error(500, "the access check did not answer", false, kHttpCors);  // never: see gate.hpp
  }
  HookEvent asked = event;  // the gate's copy; the callback keeps the other for the ticket
  auto& waiting = c.respond<AdmissionResponder>(gate);
  // The connection outlives the callback: closing it cancels the request (AdmissionResponder).
  // The callback runs once, so it may give its event away.
  uint64_t id = gate.admit(AccessAction::Play, app, c.peer_address(), std::move(asked),
                           [conn = &c, app = c.loop_context().keep(app), event = std::move(event)](
                               AccessOutcome&& o) mutable { admitted(*conn, *app, std::move(event), std::move(o)); });
  // Answered at once, `waiting` is gone already (replaced by the answer's responder).
  if (id != 0) waiting.wait_for(id);
}

void http_admit_hls(HttpConnection& c, const config::AppConfig& app, std::string name, std::string file) {
  HlsSessions& sessions = c.service().hls_sessions();
  std::string viewer =
      HlsSessions::viewer(c.peer_address(), app.name + "/" + name, hls_carried_query(c.request().query));
  if (sessions.known(viewer, c.loop_context().now_ms())) {
    return c.respond<HlsResponder>().start(app, std::move(name), std::move(file));
  }
  AccessGate& gate = c.service().gate();
  const auto& hooks = gate.config().hooks;
  // The access log's line of the viewer names its address and agent too (docs/access_log.md).
  HookEvent event =
      http_hook_event(c, app, name, !hooks.on_play.empty() || !hooks.on_play_done.empty() || access_log_enabled());
  event.protocol = "hls";
  auto& waiting = c.respond<AdmissionResponder>(gate);
  uint64_t id = gate.admit(
      AccessAction::Play, app, c.peer_address(), event,
      [conn = &c, held = c.loop_context().keep(app), event, viewer = std::move(viewer),
       file = std::move(file)](AccessOutcome&& o) mutable {
        HttpConnection& c = *conn;
        const config::AppConfig& app = *held;
        if (!o.allowed()) {
          SLUICE_LOG_WARN("conn={} proto=hls peer={} event=play_rejected app={} stream=\"{}\" reason=\"{}\"", c.id(),
                          c.peer(), app.name, printable(event.stream), o.reason);
          return c.send_error(status_of(o), "not allowed: " + o.reason, false, kHttpCors);
        }
        const uint64_t now = c.loop_context().now_ms();
        SLUICE_LOG_INFO("conn={} proto=hls peer={} event=play app={} stream={}", c.id(), c.peer(), app.name, o.name);
        c.service().hls_sessions().admit(
            std::move(viewer), AccessTicket(c.service().gate(), AccessAction::Play, event, std::move(o.seat), now),
            now);
        c.respond<HlsResponder>().start(app, o.name, std::move(file));
      });
  if (id != 0) waiting.wait_for(id);
}

void http_admit_snapshot(HttpConnection& c, const config::AppConfig& app, std::string name, bool webp) {
  if (std::string_view problem = stream_name_problem(name); !problem.empty()) {
    return c.send_error(400, "invalid stream name: " + std::string(problem), false, kHttpCors);
  }
  const std::string& query = c.request().query;
  SnapshotParamsParsed asked = parse_snapshot_params(query_param(query, "width"), query_param(query, "quality"));
  if (!asked.error.empty()) return c.send_error(400, asked.error, false, kHttpCors);
  if (webp) {
    static const bool available = webp_available();
    if (!available) return c.send_error(501, "this build's libavcodec has no WebP encoder", false, kHttpCors);
    asked.params.format = SnapshotFormat::Webp;
  }
  AccessVerdict v = check_access(app.play, AccessAction::Play, app.name, name, query, c.peer_address(), unix_now());
  if (!v.allowed()) {
    GuardCounters::bump(v.denial == Denial::Address     ? GuardEvent::AccessAddress
                        : v.denial == Denial::Signature ? GuardEvent::AccessSignature
                                                        : GuardEvent::AccessKey);
    SLUICE_LOG_WARN("conn={} proto=http peer={} event=snapshot_rejected app={} stream=\"{}\" reason=\"{}\"", c.id(),
                    c.peer(), app.name, printable(name), v.reason);
    const int status = v.denial == Denial::KeyMissing ? 401 : 403;
    return c.send_error(status, "not allowed: " + v.reason, false, kHttpCors);
  }
  c.respond<SnapshotResponder>().start(app, name, asked.params);
}

void AdmissionResponder::close() {
  if (pending_ != 0) gate_.cancel(std::exchange(pending_, 0));
}

}  // namespace sluice::server
