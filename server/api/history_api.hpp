// The page's plots' figures (docs/http.md, GET /api/v1/history): worker 0 samples the whole
// server every ApiHistory::kIntervalMs on its tick (sample_history), and the API answers from
// what it kept (history.hpp). Part of the API wing, like stats_api.cpp.
#pragma once

#include "server/http/api.hpp"

namespace sluice::server {

class ApiView;
class HttpService;

// Takes a sample when one is due (the tick calls it every second); nothing without a history.
void sample_history(ApiView& server, HttpService& http);

// GET /api/v1/history (the server's series) and /api/v1/history?stream=APP/NAME (a stream's).
HttpApiReply history_api(ApiView& server, const HttpRequest& req);

}  // namespace sluice::server
