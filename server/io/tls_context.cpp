#include "server/io/tls_context.hpp"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <cctype>

#include "server/io/tls_transform.hpp"

namespace sluice::server {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

SSL_CTX* new_ctx(bool server, bool seal_records) {
  SSL_CTX* ctx = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method());
  if (!ctx) return nullptr;
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
  // Partial writes and moving buffers: the transform hands OpenSSL spans of its own vectors.
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  // No TLS 1.3 session tickets: RTMP clients do not resume sessions, and a ticket arriving after
  // the handshake breaks librtmp's GnuTLS reads (rtmpdump: "handshake failed").
  if (server) SSL_CTX_set_num_tickets(ctx, 0);
  // TLS 1.3: AES-128-GCM first (the suite every TLS 1.3 peer has; a quarter less CPU per byte than
  // AES-256-GCM, which is what a fan-out spends most on), the server's order deciding.
  SSL_CTX_set_ciphersuites(ctx, "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256");
  if (seal_records) TlsTransform::capture_secrets(ctx);
  return ctx;
}

// The certificate's DNS names: its subjectAltName entries, else its CN.
std::vector<std::string> dns_names(SSL_CTX* ctx) {
  std::vector<std::string> out;
  X509* cert = SSL_CTX_get0_certificate(ctx);
  if (!cert) return out;
  auto* sans = static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr));
  if (sans) {
    for (int i = 0; i < sk_GENERAL_NAME_num(sans); ++i) {
      const GENERAL_NAME* n = sk_GENERAL_NAME_value(sans, i);
      if (n->type != GEN_DNS) continue;
      const ASN1_IA5STRING* s = n->d.dNSName;
      out.push_back(lower(std::string(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
                                      static_cast<size_t>(ASN1_STRING_length(s)))));
    }
    GENERAL_NAMES_free(sans);
  }
  if (out.empty()) {
    char cn[256];
    if (X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, cn, sizeof cn) > 0)
      out.push_back(lower(cn));
  }
  return out;
}

bool name_matches(const std::string& pattern, const std::string& name) {
  if (pattern == name) return true;
  if (pattern.size() > 2 && pattern[0] == '*' && pattern[1] == '.') {
    const size_t dot = name.find('.');
    return dot != std::string::npos && dot > 0 && name.substr(dot) == pattern.substr(1);
  }
  return false;
}

// SNI: switch the connection to the context whose certificate names the host asked for.
int on_server_name(SSL* ssl, int*, void* arg) {
  const char* name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
  if (!name) return SSL_TLSEXT_ERR_OK;
  const auto* self = static_cast<const TlsContext*>(arg);
  SSL_CTX* chosen = self->for_server_name(lower(name));
  if (chosen != SSL_get_SSL_CTX(ssl)) SSL_set_SSL_CTX(ssl, chosen);
  return SSL_TLSEXT_ERR_OK;
}

}  // namespace

std::string openssl_errors() {
  std::string out;
  unsigned long e;
  while ((e = ERR_get_error()) != 0) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    if (!out.empty()) out += "; ";
    out += buf;
  }
  return out.empty() ? "unknown OpenSSL error" : out;
}

Result<std::shared_ptr<TlsContext>> TlsContext::server(const std::vector<CertificateFiles>& certs, bool seal_records) {
  if (certs.empty()) return Error(Errc::Config, "a TLS listener needs a certificate and a key");
  ERR_clear_error();
  std::vector<Alternative> alts;
  auto free_all = [&alts] {
    for (auto& a : alts) SSL_CTX_free(a.ctx);
  };
  for (const CertificateFiles& f : certs) {
    SSL_CTX* ctx = new_ctx(true, seal_records);
    if (!ctx) {
      free_all();
      return Error(Errc::Config, "TLS: " + openssl_errors());
    }
    alts.push_back({{}, ctx});
    if (SSL_CTX_use_certificate_chain_file(ctx, f.cert.c_str()) != 1) {
      free_all();
      return Error(Errc::Config, "TLS certificate " + f.cert + ": " + openssl_errors());
    }
    if (SSL_CTX_use_PrivateKey_file(ctx, f.key.c_str(), SSL_FILETYPE_PEM) != 1 || SSL_CTX_check_private_key(ctx) != 1) {
      free_all();
      return Error(Errc::Config, "TLS key " + f.key + " (for " + f.cert + "): " + openssl_errors());
    }
    alts.back().names = dns_names(ctx);
  }
  SSL_CTX* def = alts.front().ctx;
  SSL_CTX_up_ref(def);
  std::shared_ptr<TlsContext> out(new TlsContext(def, true, false));
  out->alternatives_ = std::move(alts);
  SSL_CTX_set_tlsext_servername_callback(def, on_server_name);
  SSL_CTX_set_tlsext_servername_arg(def, out.get());
  return out;
}

Result<std::shared_ptr<TlsContext>> TlsContext::client(bool verify, const std::string& ca_file, bool seal_records) {
  ERR_clear_error();
  SSL_CTX* ctx = new_ctx(false, seal_records);
  if (!ctx) return Error(Errc::Config, "TLS: " + openssl_errors());
  if (verify) {
    const int ok = ca_file.empty() ? SSL_CTX_set_default_verify_paths(ctx)
                                   : SSL_CTX_load_verify_locations(ctx, ca_file.c_str(), nullptr);
    if (ok != 1) {
      SSL_CTX_free(ctx);
      return Error(Errc::Config,
                   "TLS CA bundle " + (ca_file.empty() ? std::string("(system)") : ca_file) + ": " + openssl_errors());
    }
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  }
  return std::shared_ptr<TlsContext>(new TlsContext(ctx, false, verify));
}

TlsContext::~TlsContext() {
  for (auto& a : alternatives_) SSL_CTX_free(a.ctx);
  SSL_CTX_free(ctx_);
}

SSL_CTX* TlsContext::for_server_name(const std::string& name) const {
  for (const Alternative& a : alternatives_) {
    for (const std::string& pattern : a.names) {
      if (name_matches(pattern, name)) return a.ctx;
    }
  }
  return ctx_;
}

}  // namespace sluice::server
