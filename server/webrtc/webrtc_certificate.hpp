// WebrtcCertificate: the identity Sluice shows in every WebRTC session's DTLS handshake, and the
// SSL_CTX those handshakes are made from (docs/webrtc-protocol.md, "DTLS and SRTP").
//
//  1. Made once at start: an ECDSA P-256 key and a self-signed certificate with a random CN. No CA
//     vouches for it: the SDP answer carries its SHA-256 fingerprint (fingerprint()), and the peer
//     compares the certificate DTLS shows it with that line, as Sluice does with the offer's.
//  2. The SSL_CTX (ssl_context()) speaks DTLS 1.2 only, offers the SRTP profiles
//     SRTP_AEAD_AES_128_GCM then SRTP_AES128_CM_SHA1_80 (use_srtp), ECDHE with AES-GCM or
//     ChaCha20, asks the peer for its certificate and accepts any (the fingerprint is the check:
//     server/webrtc/dtls_transport.hpp), keeps no session cache and sends no tickets.
//  3. Immutable once made, and shared by every loop: OpenSSL allows SSL_new() on one SSL_CTX from
//     many threads at once as long as nobody changes the context afterwards (its reference count
//     is atomic, and nothing here touches it after generate()).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.hpp"

typedef struct ssl_ctx_st SSL_CTX;
typedef struct x509_st X509;
typedef struct evp_pkey_st EVP_PKEY;

namespace sluice::server {

// A SHA-256 certificate fingerprint as bytes.
using Sha256Fingerprint = std::array<uint8_t, 32>;

class WebrtcCertificate {
 public:
  // Errc::Config with OpenSSL's reason when a step fails (it does not, short of memory).
  static Result<std::shared_ptr<const WebrtcCertificate>> generate();

  ~WebrtcCertificate();
  WebrtcCertificate(const WebrtcCertificate&) = delete;
  WebrtcCertificate& operator=(const WebrtcCertificate&) = delete;

  SSL_CTX* ssl_context() const { return ctx_; }
  X509* certificate() const { return cert_; }
  // "AB:CD:...": what the answer's a=fingerprint:sha-256 line carries.
  const std::string& fingerprint() const { return fingerprint_; }

  // The validity written into the certificate. WebRTC peers check the fingerprint, not the dates,
  // but a certificate already expired would be refused by a peer that does look; a year covers
  // any process's life, and the start 30 days back covers peers with wrong clocks.
  static constexpr long kValidBeforeSeconds = 30L * 24 * 3600;
  static constexpr long kValidAfterSeconds = 365L * 24 * 3600;

 private:
  WebrtcCertificate() = default;

  SSL_CTX* ctx_ = nullptr;
  X509* cert_ = nullptr;
  EVP_PKEY* key_ = nullptr;
  std::string fingerprint_;
};

// The SHA-256 fingerprint of a certificate (of its DER form, RFC 8122), as bytes and in SDP form.
std::optional<Sha256Fingerprint> certificate_sha256(X509* cert);
std::string format_fingerprint(const Sha256Fingerprint& fp);
// "AB:CD:..." (either case) to bytes; nothing when it is not 32 colon-separated hex pairs.
std::optional<Sha256Fingerprint> parse_fingerprint(std::string_view text);

}  // namespace sluice::server
