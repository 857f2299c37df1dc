#include "server/io/tls_reloader.hpp"

#include <sys/stat.h>

#include "server/io/logging.hpp"
#include "server/io/uv_handle.hpp"

namespace sluice::server {

TlsReloader::TlsReloader(uv_loop_t* loop, const std::vector<config::TlsCertificate>& certificates, uint32_t worker,
                         bool seal_records)
    : loop_(loop), worker_(worker), seal_records_(seal_records) {
  for (const auto& c : certificates) files_.push_back({c.cert, c.key});
}

TlsReloader::~TlsReloader() = default;

Result<void> TlsReloader::start() {
  stamp_ = stamp();
  auto ctx = TlsContext::server(files_, seal_records_);
  if (!ctx) return ctx.error();
  context_ = std::move(*ctx);
  uv_timer_init(loop_, &timer_);
  timer_.data = this;
  uv_timer_start(&timer_, &TlsReloader::on_timer, kCheckMs, kCheckMs);
  uv_unref(reinterpret_cast<uv_handle_t*>(&timer_));  // never what keeps a stopping loop alive
  timer_started_ = true;
  return ok();
}

void TlsReloader::close() {
  if (!timer_started_) return;
  timer_started_ = false;
  close_handle(&timer_);
}

std::string TlsReloader::stamp() const {
  std::string s;
  for (const CertificateFiles& f : files_) {
    for (const std::string* path : {&f.cert, &f.key}) {
      struct stat st {};
      if (::stat(path->c_str(), &st) != 0) {
        s += "missing;";
        continue;
      }
      s += std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec) + ":" +
           std::to_string(st.st_size) + ";";
    }
  }
  return s;
}

void TlsReloader::on_timer(uv_timer_t* t) {
  auto* self = static_cast<TlsReloader*>(t->data);
  std::string now = self->stamp();
  if (now == self->stamp_) return;
  self->stamp_ = now;
  self->reload("the certificate files changed");
}

bool TlsReloader::reload(const char* why) {
  stamp_ = stamp();
  auto ctx = TlsContext::server(files_, seal_records_);
  if (!ctx) {
    SLUICE_LOG_ERROR(
        "worker={} event=tls_reload_failed why=\"{}\" error=\"{}\" action=\"keeping the certificate in use\"", worker_,
        why, printable(ctx.error().message(), 300));
    return false;
  }
  context_ = std::move(*ctx);
  ++reloads_;
  SLUICE_LOG_INFO("worker={} event=tls_reload why=\"{}\" certificates={}", worker_, why, files_.size());
  return true;
}

}  // namespace sluice::server
