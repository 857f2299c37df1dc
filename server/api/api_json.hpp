// JSON answers of the stats API (server/stats_api.cpp, server/record_api.cpp): a body and an
// error shape shared by every route.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

#include "server/http/api.hpp"
#include "server/http/util.hpp"

namespace sluice::server {

inline std::string api_dump(const nlohmann::json& j) {
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

inline HttpApiReply json_reply(int status, const nlohmann::json& j) {
  HttpApiReply r;
  r.status = status;
  r.body = api_dump(j);
  return r;
}

inline HttpApiReply error_reply(int status, std::string_view message) {
  return json_reply(status, nlohmann::json{{"error", std::string(http_status_text(status))}, {"message", message}});
}

}  // namespace sluice::server
