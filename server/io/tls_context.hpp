// TlsContext: the OpenSSL configuration RTMPS (and later HTTPS) connections share: for a server,
// one or more certificate chains chosen by SNI; for a client (relays to rtmps:// targets), peer
// verification against the system's or a given CA bundle. TLS 1.2 or later, OpenSSL's default
// ciphers, no compression, no renegotiation. Immutable once made: a certificate reload makes a new
// context, and connections keep the one they started with (docs/tls.md).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/result.hpp"

typedef struct ssl_ctx_st SSL_CTX;

namespace sluice::server {

struct CertificateFiles {
  std::string cert;  // PEM: the certificate, then its chain
  std::string key;   // PEM private key
};

class TlsContext {
 public:
  // The first pair is the default; the others are chosen when the client's SNI names one of their
  // DNS names (subjectAltName, or the CN when there is none). Errc::Config with OpenSSL's reason.
  // seal_records: over TLS 1.3 Sluice makes the write side's records itself (TlsTransform); false
  // leaves them to OpenSSL (rtmps.record_layer: openssl, docs/tls.md).
  static Result<std::shared_ptr<TlsContext>> server(const std::vector<CertificateFiles>& certs,
                                                    bool seal_records = true);
  // verify: check the server's chain and host name; ca_file: a PEM bundle, or "" for the system's.
  static Result<std::shared_ptr<TlsContext>> client(bool verify, const std::string& ca_file = "",
                                                    bool seal_records = true);

  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  bool is_server() const { return server_; }
  bool verifies() const { return verify_; }
  SSL_CTX* get() const { return ctx_; }
  // The contexts of the SNI alternatives (the default is get()), with their names.
  SSL_CTX* for_server_name(const std::string& name) const;

 private:
  TlsContext(SSL_CTX* ctx, bool server, bool verify) : ctx_(ctx), server_(server), verify_(verify) {}

  struct Alternative {
    std::vector<std::string> names;  // lower case; "*.example.com" matches one label
    SSL_CTX* ctx = nullptr;
  };
  SSL_CTX* ctx_;
  bool server_;
  bool verify_;
  std::vector<Alternative> alternatives_;  // every pair, the default first
};

// The last OpenSSL errors as one line (and the queue emptied).
std::string openssl_errors();

}  // namespace sluice::server
