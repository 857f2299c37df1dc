// GET /api/v1/ingest: what an encoder needs to publish here (docs/http.md), for the built-in
// page's OBS settings: the RTMP and RTMPS ports, and per live app which credential a publisher
// must add to its stream name (and a player, for the thumbnails), whether snapshots are served.
// Never the keys themselves. Part of the API wing.
#pragma once

#include "server/http/api.hpp"

namespace sluice::server {

class ApiView;

HttpApiReply ingest_api(ApiView& server);

}  // namespace sluice::server
