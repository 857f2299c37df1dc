// The DTLS 1.2 client of a WHEP load player (the server answers a=setup:passive), as a sans-I/O
// transform on OpenSSL: datagrams in, datagrams out, like the server's own
// server/webrtc/dtls_transport but for the active role only and with what a load client needs.
//
//  - DtlsIdentity: one self-signed ECDSA P-256 certificate for the whole process (a browser has
//    one per RTCPeerConnection; the server cannot tell), its SHA-256 fingerprint for the offers,
//    and the SSL_CTX: DTLS 1.2, use_srtp with the profiles asked for (--srtp-profiles), no
//    certificate verification (the server's fingerprint is compared after the handshake instead).
//  - DtlsClient: one association. start() makes the ClientHello; on_datagram() takes one DTLS
//    datagram; on_timeout() retransmits a flight when OpenSSL's timer says so. Each datagram
//    OpenSSL writes stays one datagram (at most kMtu bytes), as on a UDP socket.
//  - The keys are never exported: the bench does not decrypt SRTP (the RTP header it reads is
//    clear), so after the handshake only the profile the server chose is kept, for the summary.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/result.hpp"

typedef struct ssl_st SSL;
typedef struct ssl_ctx_st SSL_CTX;
typedef struct bio_st BIO;
typedef struct evp_pkey_st EVP_PKEY;
typedef struct x509_st X509;

namespace sluice::bench {

class DtlsIdentity {
 public:
  // srtp_profiles: OpenSSL's use_srtp list, "SRTP_AEAD_AES_128_GCM:SRTP_AES128_CM_SHA1_80".
  static Result<std::unique_ptr<DtlsIdentity>> create(const std::string& srtp_profiles);
  ~DtlsIdentity();
  DtlsIdentity(const DtlsIdentity&) = delete;
  DtlsIdentity& operator=(const DtlsIdentity&) = delete;

  SSL_CTX* context() const { return ctx_; }
  const std::string& fingerprint() const { return fingerprint_; }  // "AB:CD:..."

 private:
  DtlsIdentity() = default;
  EVP_PKEY* key_ = nullptr;
  X509* cert_ = nullptr;
  SSL_CTX* ctx_ = nullptr;
  std::string fingerprint_;
};

// The SHA-256 fingerprint of a certificate in SDP form ("AB:CD:..."), empty on failure.
std::string certificate_fingerprint(X509* cert);

class DtlsClient {
 public:
  static constexpr size_t kMtu = 1200;
  using Datagrams = std::vector<std::vector<uint8_t>>;

  // expected_fingerprint: the answer's a=fingerprint:sha-256, checked when the handshake ends.
  static Result<std::unique_ptr<DtlsClient>> create(const DtlsIdentity& identity, std::string expected_fingerprint);
  ~DtlsClient();
  DtlsClient(const DtlsClient&) = delete;
  DtlsClient& operator=(const DtlsClient&) = delete;

  Result<void> start(Datagrams& out);
  // True when this datagram ended the handshake (fingerprint checked, a profile agreed).
  Result<bool> on_datagram(std::span<const uint8_t> datagram, Datagrams& out);
  // Milliseconds until on_timeout() is due; nothing while no flight waits for an answer.
  std::optional<uint64_t> timeout_ms() const;
  Result<void> on_timeout(Datagrams& out);

  bool connected() const { return connected_; }
  // "DTLSv1.2/ECDHE-ECDSA-AES128-GCM-SHA256/SRTP_AEAD_AES_128_GCM", after the handshake.
  const std::string& summary() const { return summary_; }
  uint32_t retransmissions() const { return retransmissions_; }

 private:
  explicit DtlsClient(std::string expected_fingerprint) : expected_(std::move(expected_fingerprint)) {}
  Result<bool> advance(Datagrams& out);
  Error failure(const char* what, int rc);
  void take(Datagrams& out);

  std::string expected_;
  SSL* ssl_ = nullptr;
  BIO* in_ = nullptr;
  BIO* out_ = nullptr;
  Datagrams pending_;  // written by OpenSSL, not yet handed over
  bool connected_ = false;
  std::string summary_;
  uint32_t retransmissions_ = 0;
};

}  // namespace sluice::bench
