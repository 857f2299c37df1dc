// SnapshotResponder: GET/HEAD /{live-app}/{stream}/snapshot.jpg, the stream's latest keyframe as a
// JPEG (docs/snapshots.md), made by the loop's SnapshotService
// (server/snapshot/snapshot_service.hpp). Waits while the JPEG is being made; answers 200
// image/jpeg (304 to a matching If-None-Match), 404 not live, 503 no keyframe yet (Retry-After),
// 415 not H.264/HEVC.
#pragma once

#include <string>

#include "config/config.hpp"
#include "server/http/responder.hpp"
#include "server/snapshot/snapshot_params.hpp"
#include "server/snapshot/snapshot_service.hpp"

namespace sluice::server {

class HttpConnection;

class SnapshotResponder final : public HttpResponder, public SnapshotWaiter {
 public:
  explicit SnapshotResponder(HttpConnection& conn) : conn_(conn) {}

  const char* activity() const override { return "snapshot"; }
  // Pages refresh their thumbnails every few seconds: a good answer is logged at debug level.
  bool routine() const override { return true; }
  // name: decoded, valid and admitted (server/http/admission.cpp).
  void start(const config::AppConfig& app, const std::string& name, const SnapshotParams& params);
  void snapshot_ready(const SnapshotAnswer& answer) override;
  void close() override;

 private:
  HttpConnection& conn_;
  bool waiting_ = false;
};

}  // namespace sluice::server
