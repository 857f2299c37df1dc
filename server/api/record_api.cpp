#include "server/api/record_api.hpp"

#include <nlohmann/json.hpp>

#include "server/api/api_json.hpp"
#include "server/live/worker_mesh.hpp"
#include "server/rtmp/connection.hpp"
#include "server/api/api_view.hpp"
#include "config/config.hpp"

namespace sluice::server {

namespace {

using nlohmann::json;
constexpr std::string_view kPrefix = "/api/v1/recordings";

json list_recordings(ApiView& server) {
  json out = json::array();
  for (RtmpConnection* c : server.connections()) {
    if (c->closing()) continue;
    for (const auto& r : c->recordings()) {
      out.push_back({{"stream", r.stream},
                     {"path", r.path},
                     {"bytes", r.bytes},
                     {"duration_s", r.duration_ms / 1000.0},
                     {"client_id", c->id()},
                     {"worker", server.worker()}});
    }
  }
  server.for_each_other_loop_client([&out](const json& client) {
    if (!client.contains("recordings")) return;
    for (json r : client["recordings"]) {
      r["client_id"] = client["id"];
      r["worker"] = client["worker"];
      out.push_back(std::move(r));
    }
  });
  return json{{"recordings", out}};
}

HttpApiReply control(ApiView& server, const std::string& key, bool start) {
  const size_t slash = key.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == key.size()) {
    return error_reply(404, "name a stream: /api/v1/recordings/<app>/<stream>");
  }
  const std::string app_name = key.substr(0, slash);
  const config::AppConfig* app = server.config().find_app(app_name);
  if (!app || app->type != config::AppType::Live) return error_reply(404, "no such live app: " + app_name);
  if (!app->record.enabled()) {
    return error_reply(409,
                       "app " + app_name + " does not record (set apps." + app_name + ".record: docs/recording.md)");
  }
  const json accepted{{"stream", key}, {"action", start ? "start" : "stop"}};
  for (RtmpConnection* c : server.connections()) {
    switch (c->control_recording(key, start)) {
      case RtmpConnection::RecordControl::NotPublishedHere: continue;
      case RtmpConnection::RecordControl::Done: return json_reply(202, accepted);
      case RtmpConnection::RecordControl::AlreadyRecording: return error_reply(409, key + " is being recorded already");
      case RtmpConnection::RecordControl::NotRecording: return error_reply(409, key + " is not being recorded");
      case RtmpConnection::RecordControl::AppDoesNotRecord:
        return error_reply(409, "app " + app_name + " does not record");
    }
  }
  // Published on another worker. Its snapshot (a fraction of a second old) answers the common
  // mistakes; the worker itself checks again and logs what it could not do.
  if (WorkerMesh* mesh = server.mesh()) {
    const int owner = mesh->directory().owner(key);
    if (owner >= 0 && static_cast<uint32_t>(owner) != server.worker()) {
      bool recording = false;
      const json all = list_recordings(server);
      for (const json& r : all["recordings"]) recording = recording || r["stream"] == key;
      if (start && recording) return error_reply(409, key + " is being recorded already");
      if (!start && !recording) return error_reply(409, key + " is not being recorded");
      auto e = std::make_unique<MeshEvent>();
      e->kind = start ? MeshEvent::Kind::RecordStart : MeshEvent::Kind::RecordStop;
      e->key = key;
      mesh->post(static_cast<uint32_t>(owner), std::move(e));
      return json_reply(202, accepted);
    }
  }
  return error_reply(404, key + " is not being published");
}

}  // namespace

HttpApiReply recordings_api(ApiView& server, std::string_view method, const std::string& path) {
  if (path == kPrefix) {
    if (method == "GET" || method == "HEAD") return json_reply(200, list_recordings(server));
    HttpApiReply r =
        error_reply(405, "use GET to list recordings, POST or DELETE on /api/v1/recordings/<app>/<stream>");
    r.headers = "Allow: GET, HEAD\r\n";
    return r;
  }
  const std::string key = path.substr(kPrefix.size() + 1);
  if (method == "POST") return control(server, key, true);
  if (method == "DELETE") return control(server, key, false);
  HttpApiReply r = error_reply(405, "use POST to start and DELETE to stop a recording");
  r.headers = "Allow: POST, DELETE\r\n";
  return r;
}

}  // namespace sluice::server
