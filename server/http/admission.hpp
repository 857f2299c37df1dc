// HTTP plays through the access gate (server/access/gate.hpp): HTTP-FLV and file downloads are
// admitted like RTMP plays (address rules, keys, signed URLs, the on_play hook, limits) before
// their responder starts. While a hook decides, an AdmissionResponder holds the request.
#pragma once

#include <cstdint>
#include <string>

#include "config/config.hpp"
#include "server/http/responder.hpp"

namespace sluice::server {

class AccessGate;
class HttpConnection;

// Asks the gate about playing `name` of `app` ("cam" of a live app, "dir/file.mp4" of a VOD app),
// then starts the FlvResponder or FileResponder, or answers 401/403/503 with the reason.
void http_admit_play(HttpConnection& c, const config::AppConfig& app, std::string name);
// The same for an HLS request (the playlist or a media file of stream `name`), once per viewer
// (server/http/hls_sessions.hpp); then the HlsResponder answers it.
void http_admit_hls(HttpConnection& c, const config::AppConfig& app, std::string name, std::string file);

// The same for a snapshot of live stream `name` (docs/snapshots.md): the app's play rules
// (addresses, keys, signed URLs) apply, as a snapshot shows the stream; the on_play hook is not
// asked and no seat is taken, as a thumbnail refreshed every few seconds is no viewer. Then the
// SnapshotResponder answers it.
// webp: snapshot.webp rather than snapshot.jpg.
void http_admit_snapshot(HttpConnection& c, const config::AppConfig& app, std::string name, bool webp);

class AdmissionResponder final : public HttpResponder {
 public:
  AdmissionResponder(HttpConnection& conn, AccessGate& gate) : conn_(conn), gate_(gate) {}
  const char* activity() const override { return "access"; }
  void wait_for(uint64_t id) { pending_ = id; }
  void close() override;

 private:
  HttpConnection& conn_;
  AccessGate& gate_;
  uint64_t pending_ = 0;
};

}  // namespace sluice::server
