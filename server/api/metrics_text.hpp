// The Prometheus text of GET /metrics (format 0.0.4; docs/http.md lists the series), written from
// the figures the stats API gathered: /api/v1/server's object and the streams list.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <string>

namespace sluice::server {

class ApiView;
class HttpService;

std::string prometheus_text(ApiView& server, HttpService& http, const nlohmann::json& figures,
                            const nlohmann::json& streams);

}  // namespace sluice::server
