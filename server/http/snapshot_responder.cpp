#include "server/http/snapshot_responder.hpp"

#include "server/http/connection.hpp"
#include "server/http/service.hpp"
#include "server/http/util.hpp"

namespace sluice::server {

void SnapshotResponder::start(const config::AppConfig& app, const std::string& name, const SnapshotParams& params) {
  waiting_ = true;
  conn_.service().snapshots().request(app, name, params, this);
}

void SnapshotResponder::snapshot_ready(const SnapshotAnswer& a) {
  waiting_ = false;
  std::string headers(kHttpCors);
  if (a.status != 200) {
    if (a.retry_after_s != 0) headers += "Retry-After: " + std::to_string(a.retry_after_s) + "\r\n";
    headers += "Cache-Control: no-store\r\n";
    return conn_.send_error(a.status, a.reason, false, headers);
  }
  // The keyframe, its size, quality and format name the picture: another keyframe, another tag.
  const bool jpeg = a.format == SnapshotFormat::Jpeg;
  const std::string etag = std::string(jpeg ? "\"snap-" : "\"webp-") + std::to_string(conn_.loop_context().worker()) +
                           "-" + std::to_string(a.keyframe_serial) + "-" + std::to_string(a.width) + "x" +
                           std::to_string(a.height) + "-q" + std::to_string(a.quality) + "\"";
  headers += "Cache-Control: no-cache\r\nETag: " + etag + "\r\nLast-Modified: " + http_format_date(a.keyframe_seen_s) +
             "\r\nX-Sluice-Keyframe-Timestamp: " + std::to_string(a.keyframe_timestamp) + "\r\n";
  const std::string* match = conn_.request().header("if-none-match");
  if (match && http_etag_list_matches(*match, etag, true)) return conn_.send_simple(304, {}, {}, headers);
  conn_.send_shared(200, jpeg ? "image/jpeg" : "image/webp", a.jpeg, headers);
}

void SnapshotResponder::close() {
  if (waiting_) conn_.service().snapshots().cancel(this);
  waiting_ = false;
}

}  // namespace sluice::server
