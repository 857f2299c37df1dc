// TlsReloader: the RTMPS server context of one loop, made again when its certificate or key files
// change (checked every few seconds by their modification time and size) or when asked (SIGHUP).
// New handshakes get the new context; connections keep the one they started with. A new pair that
// does not load (a half-written file, a key that does not match) keeps the old context, with an
// error log line, and is tried again at the next change (docs/tls.md, "Certificate reload").
#pragma once

#include <uv.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "config/config.hpp"
#include "server/io/tls_context.hpp"

namespace sluice::server {

class TlsReloader {
 public:
  static constexpr uint64_t kCheckMs = 2000;

  // certificates: rtmps.certificates or https.certificates (config/config.hpp).
  // seal_records: for TlsContext::server (rtmps.record_layer).
  TlsReloader(uv_loop_t* loop, const std::vector<config::TlsCertificate>& certificates, uint32_t worker,
              bool seal_records = true);
  ~TlsReloader();
  TlsReloader(const TlsReloader&) = delete;
  TlsReloader& operator=(const TlsReloader&) = delete;

  // Loads the context (a failure here stops the server from starting) and starts watching.
  Result<void> start();
  void close();
  // Reloads now, whether or not the files changed (SIGHUP). True when the new context is in use.
  bool reload(const char* why);
  const std::shared_ptr<const TlsContext>& context() const { return context_; }
  uint64_t reloads() const { return reloads_; }

 private:
  static void on_timer(uv_timer_t* t);
  std::string stamp() const;  // the files' mtimes and sizes, as one string

  uv_loop_t* loop_;
  std::vector<CertificateFiles> files_;
  uint32_t worker_;
  bool seal_records_;
  std::shared_ptr<const TlsContext> context_;
  std::string stamp_;
  uv_timer_t timer_{};
  bool timer_started_ = false;
  uint64_t reloads_ = 0;
};

}  // namespace sluice::server
