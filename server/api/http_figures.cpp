#include "server/api/http_figures.hpp"

#include <string_view>

#include "server/http/connection.hpp"
#include "server/http/flv_player.hpp"
#include "server/http/service.hpp"
#include "server/api/api_view.hpp"
#include "server/live/worker_mesh.hpp"

namespace sluice::server {

using nlohmann::json;

HttpTotals http_loop_totals(const HttpService* http) {
  HttpTotals t;
  if (http == nullptr) return t;
  t.bytes_in = http->closed_bytes_in;
  t.bytes_out = http->closed_bytes_out;
  t.requests = http->requests;
  for (const HttpConnection* c : http->connections()) {
    t.bytes_in += c->bytes_in();
    t.bytes_out += c->bytes_out();
    if (std::string_view(c->activity()) != "idle") ++t.busy;
    if (const HttpFlvPlayer* p = c->flv()) ++t.flv_readers[p->key()];
  }
  return t;
}

json http_loop_json(const HttpService& http) {
  HttpTotals t = http_loop_totals(&http);
  json readers = json::object();
  for (const auto& [key, n] : t.flv_readers) readers[key] = n;
  return json{{"bytes_in", t.bytes_in},
              {"bytes_out", t.bytes_out},
              {"requests", t.requests},
              {"busy", t.busy},
              {"flv_readers", readers}};
}

HttpTotals http_totals(ApiView& server, const HttpService* http) {
  HttpTotals t = http_loop_totals(http);
  WorkerMesh* mesh = server.mesh();
  if (mesh == nullptr) return t;
  for (const auto& shared : mesh->snapshots(server.worker())) {
    const json& snap = *shared;
    auto h = snap.find("http");
    if (h == snap.end()) continue;
    t.bytes_in += h->value("bytes_in", uint64_t{0});
    t.bytes_out += h->value("bytes_out", uint64_t{0});
    t.requests += h->value("requests", uint64_t{0});
    t.busy += h->value("busy", size_t{0});
    if (auto r = h->find("flv_readers"); r != h->end()) {
      for (auto it = r->begin(); it != r->end(); ++it) t.flv_readers[it.key()] += it->get<size_t>();
    }
  }
  return t;
}

void add_http_clients(const HttpService& http, uint64_t now_ms, uint32_t worker, json& rows) {
  for (const HttpConnection* c : http.connections()) {
    json j{{"id", c->id()},
           {"protocol", "http"},
           {"address", c->peer()},
           {"worker", worker},
           {"activity", c->activity()},
           {"resource", c->resource()},
           {"bytes_in", c->bytes_in()},
           {"bytes_out", c->bytes_out()},
           {"duration_s", static_cast<double>(now_ms - c->started_ms()) / 1000.0}};
    if (const HttpFlvPlayer* p = c->flv()) j["stream"] = p->key();
    rows.push_back(std::move(j));
  }
}

}  // namespace sluice::server
