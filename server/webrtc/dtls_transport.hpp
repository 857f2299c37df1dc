// DtlsTransport: the DTLS 1.2 association of one WebRTC session, as a datagram transform (no I/O:
// datagrams in, datagrams out; docs/webrtc-protocol.md, "DTLS and SRTP"). Its one product is the
// SRTP keys (server/webrtc/srtp_keys.hpp): WebRTC without data channels sends nothing else
// over DTLS.
//
//  1. Role: Passive (the DTLS server) is what Sluice's answer says (a=setup:passive); Active (the
//     client) when the offer says a=setup:passive, and for tests. start() makes an active side's
//     ClientHello; a passive side waits for one.
//  2. on_datagram(): one UDP datagram whose first byte said DTLS (20-63). What OpenSSL answers is
//     appended to `out`, one vector per datagram to send, each at most kMtu bytes (records of one
//     flight packed together as OpenSSL packs them for a UDP socket).
//  3. Retransmission: while a flight waits for its answer, timeout_ms() says when to call
//     on_timeout(), which resends it if it is due (OpenSSL keeps the timer on its own clock, so a
//     call a little early does nothing and timeout_ms() then says how much is left).
//  4. The handshake's end (DtlsEvent::Connected): the peer's certificate has the SHA-256
//     fingerprint the offer's a=fingerprint named (compared in constant time, during the handshake
//     and again after it), a use_srtp profile was agreed, and srtp_keys() has both directions' keys
//     (RFC 5764 4.2). A wrong fingerprint or no profile fails the association (Errc::Rejected).
//  5. Failures: a record OpenSSL refuses fatally fails the association with OpenSSL's reason
//     (Errc::Malformed), and an alert for the peer may be in `out`. Before the handshake started
//     (no valid ClientHello yet) a failure only costs the datagram: the transport starts over and
//     `out` gets nothing. Records DTLS itself drops (bad MAC, wrong epoch, not a record) are no
//     error. The caller limits the time a handshake may take: state() says where it is.
//  6. close_notify from the peer: DtlsEvent::Closed (the session ends); close() sends ours.
//     Application data (a data channel the answer did not accept) is read and dropped.
//  7. One per session, on its loop; the SSL_CTX comes from the process's WebrtcCertificate.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "server/webrtc/srtp_keys.hpp"
#include "server/webrtc/webrtc_certificate.hpp"

typedef struct ssl_st SSL;
typedef struct bio_st BIO;
typedef struct x509_store_ctx_st X509_STORE_CTX;

namespace sluice::server {

enum class DtlsRole : uint8_t {
  Passive,  // the DTLS server: waits for the ClientHello (our answer's a=setup:passive)
  Active,   // the DTLS client: sends the ClientHello
};

enum class DtlsState : uint8_t {
  New,          // passive, no ClientHello yet
  Handshaking,  // flights under way
  Connected,    // keys ready
  Closed,       // close_notify received or sent
  Failed,       // see failure()
};

enum class DtlsEvent : uint8_t {
  None,       // nothing for the caller (a flight answered, a record dropped, data ignored)
  Connected,  // the handshake has just ended: fingerprint checked, srtp_keys() ready
  Closed,     // the peer sent close_notify
};

struct DtlsConfig {
  DtlsRole role = DtlsRole::Passive;
  std::string remote_fingerprint;  // the offer's a=fingerprint:sha-256 value, "AB:CD:..."
  // The first retransmission timeout; OpenSSL doubles it for each retry, up to kMaxTimeoutMs.
  uint32_t initial_timeout_ms = 400;
};

class DtlsTransport {
 public:
  // The largest datagram we send: 1200 bytes of UDP payload fit the smallest IPv6 path (1280)
  // with its headers and the tunnels (VPN, TURN, PPPoE) a browser's path may add.
  static constexpr size_t kMtu = 1200;
  static constexpr uint32_t kMaxTimeoutMs = 8000;

  // Errc::Config for a remote fingerprint that is not 32 hex pairs, or when OpenSSL has no memory.
  static Result<std::unique_ptr<DtlsTransport>> create(std::shared_ptr<const WebrtcCertificate> certificate,
                                                       DtlsConfig config);
  ~DtlsTransport();
  DtlsTransport(const DtlsTransport&) = delete;
  DtlsTransport& operator=(const DtlsTransport&) = delete;

  using Datagrams = std::vector<std::vector<uint8_t>>;

  // Active: the ClientHello into `out`. Passive: nothing.
  Result<void> start(Datagrams& out);
  Result<DtlsEvent> on_datagram(std::span<const uint8_t> in, Datagrams& out);
  // Milliseconds until on_timeout() is due; nothing when no flight waits for an answer.
  std::optional<uint64_t> timeout_ms() const;
  Result<void> on_timeout(Datagrams& out);
  // Our close_notify (after the handshake; nothing before), then Closed.
  void close(Datagrams& out);

  DtlsState state() const { return state_; }
  DtlsRole role() const { return config_.role; }
  const std::string& failure() const { return failure_; }
  // After Connected.
  const SrtpKeys& srtp_keys() const { return keys_; }
  std::string summary() const;  // "DTLSv1.2/ECDHE-ECDSA-AES128-GCM-SHA256/SRTP_AEAD_AES_128_GCM"
  // Retransmitted flights so far, for the session's log line.
  uint32_t retransmissions() const { return retransmissions_; }
  SSL* native_handle() const { return ssl_; }  // for tests

 private:
  DtlsTransport(std::shared_ptr<const WebrtcCertificate> certificate, DtlsConfig config);
  Result<void> reset();  // a fresh SSL and BIOs
  Result<DtlsEvent> advance(Datagrams& out);
  Result<DtlsEvent> finish_handshake();
  Result<DtlsEvent> read_records();
  Error fail(Errc code, std::string reason);
  Error openssl_failure(const char* what, int rc);
  void take_output(Datagrams& out);
  static int on_verify(int ok, X509_STORE_CTX* store);
  static unsigned on_timer(SSL* ssl, unsigned previous_us);

  std::shared_ptr<const WebrtcCertificate> certificate_;
  DtlsConfig config_;
  Sha256Fingerprint expected_{};
  SSL* ssl_ = nullptr;
  BIO* in_ = nullptr;   // a memory BIO: one datagram at a time
  BIO* out_ = nullptr;  // ours: each write OpenSSL makes is one datagram, kept in pending_
  Datagrams pending_;   // written by OpenSSL, not yet handed to the caller
  DtlsState state_ = DtlsState::New;
  std::string failure_;
  bool fingerprint_mismatch_ = false;
  SrtpKeys keys_;
  uint32_t retransmissions_ = 0;
};

}  // namespace sluice::server
