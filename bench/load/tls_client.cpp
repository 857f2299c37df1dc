#include "bench/load/tls_client.hpp"

#include <arpa/inet.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include <algorithm>
#include <memory>

namespace sluice::bench {

namespace {

// One client context for the process: no verification, TLS 1.2+, no client-side session cache
// (so no resumption). Created on first use, freed at exit.
SSL_CTX* client_context() {
  static const std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> ctx(
      [] {
        SSL_CTX* c = SSL_CTX_new(TLS_client_method());
        if (!c) return c;
        SSL_CTX_set_min_proto_version(c, TLS1_2_VERSION);
        SSL_CTX_set_verify(c, SSL_VERIFY_NONE, nullptr);
        SSL_CTX_set_session_cache_mode(c, SSL_SESS_CACHE_OFF);
        return c;
      }(),
      &SSL_CTX_free);
  return ctx.get();
}

// OpenSSL's error queue as one line (and emptied).
std::string openssl_reason() {
  std::string why;
  while (const unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    if (!why.empty()) why += "; ";
    why += buf;
  }
  return why.empty() ? "no reason given" : why;
}

// RFC 6066: SNI carries host names, not address literals (ffmpeg and curl skip it for those too).
bool is_address_literal(const std::string& host) {
  unsigned char buf[16];
  return inet_pton(AF_INET, host.c_str(), buf) == 1 || inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

// SSL_read hands out at most one record (16 KiB of plaintext) per call.
constexpr size_t kReadChunk = 16 * 1024;

}  // namespace

TlsClient::TlsClient(std::string server_name) : server_name_(std::move(server_name)) {}

TlsClient::~TlsClient() {
  if (ssl_) SSL_free(ssl_);  // and both BIOs with it
}

Error TlsClient::error(const char* what, int rc) {
  failed_ = true;
  const int err = SSL_get_error(ssl_, rc);
  if (err == SSL_ERROR_ZERO_RETURN) return Error(Errc::Closed, "the server closed the TLS session (close_notify)");
  return Error(Errc::Malformed, std::string(what) + ": " + openssl_reason());
}

Result<void> TlsClient::start() {
  SSL_CTX* ctx = client_context();
  ssl_ = ctx ? SSL_new(ctx) : nullptr;
  BIO* in = BIO_new(BIO_s_mem());
  BIO* out = BIO_new(BIO_s_mem());
  if (!ssl_ || !in || !out) {
    BIO_free(in);
    BIO_free(out);
    failed_ = true;
    return Error(Errc::Io, "cannot set up TLS: " + openssl_reason());
  }
  BIO_set_mem_eof_return(in, -1);  // empty means "nothing yet", not end of file
  SSL_set_bio(ssl_, in, out);
  if (!server_name_.empty() && !is_address_literal(server_name_)) SSL_set_tlsext_host_name(ssl_, server_name_.c_str());
  SSL_set_connect_state(ssl_);
  return step();  // the ClientHello, for the next write()
}

Result<void> TlsClient::step() {
  ERR_clear_error();
  const int rc = SSL_do_handshake(ssl_);
  if (rc == 1) {
    done_ = true;
    return {};
  }
  const int err = SSL_get_error(ssl_, rc);
  if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) return {};
  return error("handshake", rc);
}

Result<void> TlsClient::encrypt(std::span<const uint8_t> plain) {
  // A memory BIO takes everything: SSL_write returns the whole length (in records of 16 KiB).
  while (!plain.empty()) {
    ERR_clear_error();
    const int n = SSL_write(ssl_, plain.data(), static_cast<int>(std::min<size_t>(plain.size(), 1u << 30)));
    if (n <= 0) return error("write", n);
    plain = plain.subspan(static_cast<size_t>(n));
  }
  return {};
}

Result<void> TlsClient::feed(std::span<const uint8_t> cipher, std::vector<uint8_t>& plain) {
  if (failed_ || !ssl_) return Error(Errc::Closed, "the TLS session has failed");
  if (!cipher.empty() && BIO_write(SSL_get_rbio(ssl_), cipher.data(), static_cast<int>(cipher.size())) !=
                             static_cast<int>(cipher.size())) {
    failed_ = true;
    return Error(Errc::Io, "cannot buffer TLS input");
  }
  if (!done_) {
    if (auto r = step(); !r) return r;
    if (!done_) return {};
    if (!early_.empty()) {
      const std::vector<uint8_t> early = std::move(early_);
      early_.clear();
      if (auto r = encrypt(early); !r) return r;
    }
  }
  for (;;) {
    const size_t at = plain.size();
    plain.resize(at + kReadChunk);
    ERR_clear_error();
    const int n = SSL_read(ssl_, plain.data() + at, static_cast<int>(kReadChunk));
    plain.resize(at + (n > 0 ? static_cast<size_t>(n) : 0));
    if (n > 0) continue;
    const int err = SSL_get_error(ssl_, n);
    if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) return {};
    return error("read", n);
  }
}

Result<void> TlsClient::write(std::span<const uint8_t> plain, std::vector<uint8_t>& cipher) {
  if (failed_ || !ssl_) return Error(Errc::Closed, "the TLS session has failed");
  if (!plain.empty()) {
    if (!done_) {
      early_.insert(early_.end(), plain.begin(), plain.end());
    } else if (auto r = encrypt(plain); !r) {
      return r;
    }
  }
  BIO* out = SSL_get_wbio(ssl_);
  if (const size_t n = BIO_ctrl_pending(out); n > 0) {
    const size_t at = cipher.size();
    cipher.resize(at + n);
    const int got = BIO_read(out, cipher.data() + at, static_cast<int>(n));
    cipher.resize(at + (got > 0 ? static_cast<size_t>(got) : 0));
  }
  return {};
}

size_t TlsClient::pending() const { return (ssl_ ? BIO_ctrl_pending(SSL_get_wbio(ssl_)) : 0) + early_.size(); }

std::string TlsClient::negotiated() const {
  if (!ssl_ || !done_) return "";
  return std::string(SSL_get_version(ssl_)) + " " + SSL_CIPHER_get_name(SSL_get_current_cipher(ssl_));
}

}  // namespace sluice::bench
