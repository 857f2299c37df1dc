#include "server/io/tls_transform.hpp"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

namespace sluice::server {

namespace {

// The output BIO: OpenSSL's records are appended to the transform's pending vector as they are
// made, with no memory BIO in between (which zero-fills its growth and costs one more copy and
// one more clearing per flush: a third of a TLS player's cost at 500 players).
int sink_write(BIO* bio, const char* data, size_t len, size_t* written) {
  auto* out = static_cast<std::vector<uint8_t>*>(BIO_get_data(bio));
  const auto* bytes = reinterpret_cast<const uint8_t*>(data);
  out->insert(out->end(), bytes, bytes + len);
  *written = len;
  return 1;
}

long sink_ctrl(BIO*, int cmd, long, void*) { return cmd == BIO_CTRL_FLUSH ? 1 : 0; }

int sink_create(BIO* bio) {
  BIO_set_init(bio, 1);
  return 1;
}

const BIO_METHOD* sink_method() {
  static BIO_METHOD* method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "sluice TLS output");
    BIO_meth_set_write_ex(m, sink_write);
    BIO_meth_set_ctrl(m, sink_ctrl);
    BIO_meth_set_create(m, sink_create);
    return m;
  }();
  return method;
}

// Moves what OpenSSL made for the peer into `out`: by swapping when `out` is empty (no copy).
void drain(std::vector<uint8_t>& pending, std::vector<uint8_t>& out) {
  if (pending.empty()) return;
  if (out.empty()) {
    out.swap(pending);
  } else {
    out.insert(out.end(), pending.begin(), pending.end());
  }
  pending.clear();
}

}  // namespace

TlsTransform::TlsTransform(std::shared_ptr<const TlsContext> context, const std::string& server_name)
    : context_(std::move(context)) {
  ssl_ = SSL_new(context_->get());
  in_ = BIO_new(BIO_s_mem());
  out_ = BIO_new(sink_method());
  if (out_) BIO_set_data(out_, &pending_);
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
  drain(pending_, cipher_out);
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
  drain(pending_, out);
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
