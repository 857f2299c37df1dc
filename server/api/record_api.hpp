// The recordings routes of the stats API (docs/http.md, docs/recording.md):
//   GET    /api/v1/recordings                   what is being recorded now, on every worker
//   POST   /api/v1/recordings/<app>/<stream>    starts recording a published stream
//   DELETE /api/v1/recordings/<app>/<stream>    stops it (the file is finished as at unpublish)
// Start and stop reach the worker of the stream's publisher through the mesh, so the answer is
// 202 Accepted: the recording starts (or ends) on that worker a moment later. Part of the
// API wing (server/api/), like stats_api.cpp.
#pragma once

#include <string>
#include <string_view>

#include "server/http/api.hpp"

namespace sluice::server {

class ApiView;

// path is percent-decoded and has no trailing '/'.
HttpApiReply recordings_api(ApiView& server, std::string_view method, const std::string& path);

}  // namespace sluice::server
