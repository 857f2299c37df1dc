// TlsClient: the client side of TLS as a sans-I/O byte transform, for rtmps:// URLs. OpenSSL
// works on two memory BIOs (SSL_set_bio): the connection feeds in what the socket read and sends
// out what comes back, and the RTMP session above sees plaintext only.
//
// A load generator talks to a local server with a self-signed certificate, so the certificate
// is not verified. The host goes out as SNI; TLS 1.2 or later; no session resumption (every
// connection pays a full handshake, as a fleet of new players would).
//
// Use:
//  - start(): once, when TCP is connected; queues the ClientHello.
//  - feed(cipher, plain): bytes read from the socket; appends the plaintext they carried (none
//    during the handshake).
//  - write(plain, cipher): plaintext to send (kept until the handshake is done), then appends all
//    pending ciphertext (handshake messages, records, alerts), in order. write({}, cipher) only
//    collects what is pending; call it after every feed().
//  - Errors (failed handshake, bad record, close_notify from the server) carry OpenSSL's reason;
//    the caller closes the connection.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "base/result.hpp"

typedef struct ssl_st SSL;

namespace sluice::bench {

class TlsClient {
 public:
  explicit TlsClient(std::string server_name);
  ~TlsClient();
  TlsClient(const TlsClient&) = delete;
  TlsClient& operator=(const TlsClient&) = delete;

  Result<void> start();
  Result<void> feed(std::span<const uint8_t> cipher, std::vector<uint8_t>& plain);
  Result<void> write(std::span<const uint8_t> plain, std::vector<uint8_t>& cipher);

  bool handshake_done() const { return done_; }
  // Ciphertext not yet taken plus plaintext waiting for the handshake.
  size_t pending() const;
  // "TLSv1.3 TLS_AES_256_GCM_SHA384" once the handshake is done.
  std::string negotiated() const;

 private:
  Result<void> step();  // the handshake, as far as the input allows
  Result<void> encrypt(std::span<const uint8_t> plain);
  Error error(const char* what, int rc);

  std::string server_name_;
  SSL* ssl_ = nullptr;
  bool done_ = false;
  bool failed_ = false;
  std::vector<uint8_t> early_;  // plaintext written before the handshake finished
};

}  // namespace sluice::bench
