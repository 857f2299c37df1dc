#include "server/io/tls_transform.hpp"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

namespace sluice::server {

namespace {

// Moves everything OpenSSL wrote for the peer into `out`.
void drain(BIO* bio, std::vector<uint8_t>& out) {
  const size_t pending = BIO_ctrl_pending(bio);
  if (pending == 0) return;
  const size_t at = out.size();
  out.resize(at + pending);
  const int n = BIO_read(bio, out.data() + at, static_cast<int>(pending));
  out.resize(at + (n > 0 ? static_cast<size_t>(n) : 0));
}

}  // namespace

TlsTransform::TlsTransform(std::shared_ptr<const TlsContext> context, const std::string& server_name)
    : context_(std::move(context)) {
  ssl_ = SSL_new(context_->get());
  in_ = BIO_new(BIO_s_mem());
  out_ = BIO_new(BIO_s_mem());
  if (!ssl_ || !in_ || !out_) {
    failed_ = true;
    return;
  }
  // An empty memory BIO means "nothing yet", not end of file.
  BIO_set_mem_eof_return(in_, -1);
  SSL_set_bio(ssl_, in_, out_);  // the SSL owns both now
  if (context_->is_server()) {
    SSL_set_accept_state(ssl_);
  } else {
    if (!server_name.empty()) {
      SSL_set_tlsext_host_name(ssl_, server_name.c_str());
      if (context_->verifies()) SSL_set1_host(ssl_, server_name.c_str());
    }
    SSL_set_connect_state(ssl_);
    (void)advance();  // the ClientHello, for take_output()
  }
}

TlsTransform::~TlsTransform() {
  if (ssl_) {
    SSL_free(ssl_);  // frees the BIOs
  } else {
    BIO_free(in_);
    BIO_free(out_);
  }
}

Error TlsTransform::failure(const char* what, int rc) {
  failed_ = true;
  const int err = SSL_get_error(ssl_, rc);
  if (err == SSL_ERROR_ZERO_RETURN) return Error(Errc::Closed, "TLS: the peer closed the session (close_notify)");
  std::string why = openssl_errors();
  if (!context_->is_server() && context_->verifies()) {
    const long v = SSL_get_verify_result(ssl_);
    if (v != X509_V_OK) {
      return Error(Errc::Rejected, std::string("TLS ") + what + ": certificate verify failed: " +
                                       X509_verify_cert_error_string(v));
    }
  }
  return Error(Errc::Malformed, std::string("TLS ") + what + ": " + why);
}

Result<void> TlsTransform::advance() {
  if (failed_) return Error(Errc::Closed, "TLS: the session has failed");
  if (!handshake_done_) {
    ERR_clear_error();
    const int rc = SSL_do_handshake(ssl_);
    if (rc != 1) {
      const int err = SSL_get_error(ssl_, rc);
      if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) return {};
      return failure("handshake", rc);
    }
    handshake_done_ = true;
  }
  return {};
}

Result<void> TlsTransform::feed(std::span<const uint8_t> cipher, std::vector<uint8_t>& plain) {
  if (failed_) return Error(Errc::Closed, "TLS: the session has failed");
  if (!cipher.empty() && BIO_write(in_, cipher.data(), static_cast<int>(cipher.size())) != static_cast<int>(cipher.size())) {
    failed_ = true;
    return Error(Errc::Io, "TLS: cannot buffer the input");
  }
  const bool was_done = handshake_done_;
  if (auto r = advance(); !r) return r;
  if (!handshake_done_) return {};
  if (!was_done && !waiting_.empty()) {
    // Written before the handshake finished: their records go out with take_output().
    std::vector<uint8_t> early = std::move(waiting_);
    waiting_.clear();
    if (auto r = write_records(early); !r) return r;
  }
  uint8_t buf[16384];
  for (;;) {
    ERR_clear_error();
    const int n = SSL_read(ssl_, buf, sizeof buf);
    if (n > 0) {
      plain.insert(plain.end(), buf, buf + n);
      continue;
    }
    const int err = SSL_get_error(ssl_, n);
    if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) return {};
    return failure("read", n);
  }
}

Result<void> TlsTransform::write(std::span<const uint8_t> plain, std::vector<uint8_t>& cipher_out) {
  if (failed_) return Error(Errc::Closed, "TLS: the session has failed");
  if (!handshake_done_) {
    waiting_.insert(waiting_.end(), plain.begin(), plain.end());
    return {};
  }
  if (auto r = write_records(plain); !r) return r;
  drain(out_, cipher_out);
  return {};
}

Result<void> TlsTransform::write_records(std::span<const uint8_t> plain) {
  while (!plain.empty()) {
    ERR_clear_error();
    const int n = SSL_write(ssl_, plain.data(), static_cast<int>(std::min<size_t>(plain.size(), 1 << 30)));
    if (n <= 0) return failure("write", n);
    plain = plain.subspan(static_cast<size_t>(n));
  }
  return {};
}

void TlsTransform::take_output(std::vector<uint8_t>& out) {
  if (out_) drain(out_, out);
}

void TlsTransform::shutdown() {
  if (ssl_ && !failed_) SSL_shutdown(ssl_);
}

std::string TlsTransform::protocol() const { return ssl_ ? SSL_get_version(ssl_) : ""; }

std::string TlsTransform::server_name() const {
  const char* n = ssl_ ? SSL_get_servername(ssl_, TLSEXT_NAMETYPE_host_name) : nullptr;
  return n ? n : "";
}

std::string TlsTransform::peer_subject() const {
  X509* cert = ssl_ ? SSL_get1_peer_certificate(ssl_) : nullptr;
  if (!cert) return "";
  char buf[512];
  X509_NAME_oneline(X509_get_subject_name(cert), buf, sizeof buf);
  X509_free(cert);
  return buf;
}

}  // namespace sluice::server
