// TlsTransform: TLS as a byte transform for one connection, on OpenSSL memory BIOs. The socket
// layer feeds it what it reads and sends what it produces; the RTMP (or HTTP) session above sees
// plaintext only and does not change. Nothing here does I/O or blocks.
//
// Use:
//  - feed(cipher, plain): bytes read from the socket; appends the plaintext they carried. During
//    the handshake it produces none, but take_output() then has handshake bytes to send.
//  - write(pieces, cipher_out): plaintext to send, appended to cipher_out as TLS records (one write
//    of a whole flush batch makes few large records, not one per RTMP message). Before the
//    handshake is done the plaintext is kept and sent as soon as it is.
//  - Over TLS 1.3, when the context was made with seal_records (TlsContext::server, ::client),
//    OpenSSL makes the records of the first write after the handshake (the probe); if Sluice
//    (TlsRecordSealer) makes the same first record byte for byte, Sluice makes every record after
//    it and OpenSSL only reads. A KeyUpdate the peer asks for is answered here, the key is updated
//    every kRecordsPerKey records, close_notify is sealed here, and anything OpenSSL would still
//    write is dropped (docs/tls.md, "Records").
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
#include "server/io/tls_record_sealer.hpp"

typedef struct ssl_st SSL;
typedef struct bio_st BIO;
typedef struct ssl_ctx_st SSL_CTX;

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
  Result<void> write(std::span<const std::span<const uint8_t>> pieces, ByteBuffer& cipher_out);
  Result<void> write(std::span<const uint8_t> plain, ByteBuffer& cipher_out);
  void take_output(ByteBuffer& out);
  // A close_notify alert, for a clean end (then take_output()).
  void shutdown();

  bool handshake_done() const { return handshake_done_; }
  std::string protocol() const;  // "TLSv1.3" ...
  // For the close log line: "TLSv1.3/TLS_AES_128_GCM_SHA256/sluice" (who makes the records).
  std::string summary() const;
  std::string server_name() const;             // the SNI the client sent (server side)
  std::string peer_subject() const;            // the peer certificate's subject, "" without one
  SSL* native_handle() const { return ssl_; }  // for tests: what the transform has no call for
  // Records sealed under one key before Sluice updates it (a KeyUpdate first): 2^23, well inside
  // RFC 8446's limits; lower only for tests.
  static constexpr uint64_t kRecordsPerKey = uint64_t{1} << 23;
  void set_records_per_key(uint64_t n) { records_per_key_ = n; }
  // True once Sluice makes the write side's records (see above).
  bool seals_own_records() const { return sealer_ != nullptr && records_ == Records::Sluice; }

  // Installed on every SSL_CTX whose connections may seal their own records: OpenSSL's key log
  // callback, which hands each connection its write traffic secret.
  static void capture_secrets(SSL_CTX* ctx);

 private:
  Result<void> advance();                                      // the handshake, as far as the input allows
  Result<void> write_records(std::span<const uint8_t> plain);  // by OpenSSL, into out_
  Error failure(const char* what, int rc);
  void take_over_records(std::span<const uint8_t> plain, size_t first_record);
  Result<void> answer_key_update();
  Result<void> update_write_key(ByteBuffer& out);  // a KeyUpdate sealed into out, then the next key
  static void on_key_log(const SSL* ssl, const char* line);
  static void on_message(int write_p, int version, int content_type, const void* buf, size_t len, SSL* ssl, void* arg);

  // Who makes the write side's records: OpenSSL until a TLS 1.3 write secret is known, then the
  // next write is the probe, then Sluice (or OpenSSL for good when the probe disagrees).
  enum class Records { OpenSsl, Probe, Sluice };

  std::shared_ptr<const TlsContext> context_;
  SSL* ssl_ = nullptr;
  BIO* in_ = nullptr;   // ciphertext from the peer, read by OpenSSL
  BIO* out_ = nullptr;  // where OpenSSL writes the ciphertext for the peer: appends to pending_
  bool handshake_done_ = false;
  bool failed_ = false;
  std::vector<uint8_t> waiting_;  // plaintext written before the handshake finished
  ByteBuffer pending_;            // records made for the peer, not yet taken (the output BIO's)
  Records records_ = Records::OpenSsl;
  std::vector<uint8_t> write_secret_;  // from the key log, until the probe
  std::unique_ptr<TlsRecordSealer> sealer_;
  std::vector<uint8_t> gathered_;  // the pieces of a write in one, for OpenSSL
  ByteBuffer dropped_;             // the output BIO's target once Sluice seals the records
  bool key_update_asked_ = false;  // the peer sent KeyUpdate(update_requested)
  uint64_t records_per_key_ = kRecordsPerKey;
  bool closed_ = false;  // close_notify sealed: nothing more to write
};

}  // namespace sluice::server
