// TlsTransform: TLS as a byte transform for one connection, on OpenSSL memory BIOs. The socket
// layer feeds it what it reads and sends what it produces; the RTMP (or HTTP) session above sees
// plaintext only and does not change. Nothing here does I/O or blocks.
//
// Use:
//  - feed(cipher, plain): bytes read from the socket; appends the plaintext they carried. During
//    the handshake it produces none, but take_output() then has handshake bytes to send.
//  - write(plain, cipher_out): plaintext to send, appended to cipher_out as TLS records (one write
//    of a whole flush batch makes few large records, not one per RTMP message). Before the
//    handshake is done the plaintext is kept and sent as soon as it is.
//  - take_output(out): ciphertext to send that is not the answer to a write (handshake, alerts,
//    session tickets). Call it after every feed().
//  - Errors (a bad record, a failed handshake, verification) are Errc::Malformed or Errc::Rejected
//    with OpenSSL's reason; the caller closes the connection. close_notify from the peer: Closed.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "server/io/tls_context.hpp"

typedef struct ssl_st SSL;
typedef struct bio_st BIO;

namespace sluice::server {

class TlsTransform {
 public:
  // For a client, server_name is sent as SNI and, when the context verifies, checked against the
  // certificate.
  TlsTransform(std::shared_ptr<const TlsContext> context, const std::string& server_name = "");
  ~TlsTransform();
  TlsTransform(const TlsTransform&) = delete;
  TlsTransform& operator=(const TlsTransform&) = delete;

  Result<void> feed(std::span<const uint8_t> cipher, std::vector<uint8_t>& plain);
  Result<void> write(std::span<const uint8_t> plain, std::vector<uint8_t>& cipher_out);
  void take_output(std::vector<uint8_t>& out);
  // A close_notify alert, for a clean end (then take_output()).
  void shutdown();

  bool handshake_done() const { return handshake_done_; }
  std::string protocol() const;  // "TLSv1.3" ...
  std::string server_name() const;  // the SNI the client sent (server side)
  std::string peer_subject() const;  // the peer certificate's subject, "" without one

 private:
  Result<void> advance();  // the handshake, as far as the input allows
  Result<void> write_records(std::span<const uint8_t> plain);  // into out_
  Error failure(const char* what, int rc);

  std::shared_ptr<const TlsContext> context_;
  SSL* ssl_ = nullptr;
  BIO* in_ = nullptr;   // ciphertext from the peer, read by OpenSSL
  BIO* out_ = nullptr;  // where OpenSSL writes the ciphertext for the peer: appends to pending_
  bool handshake_done_ = false;
  bool failed_ = false;
  std::vector<uint8_t> waiting_;  // plaintext written before the handshake finished
  std::vector<uint8_t> pending_;  // records made for the peer, not yet taken (the output BIO's)
};

}  // namespace sluice::server
