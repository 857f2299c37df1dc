#include "server/webrtc/webrtc_certificate.hpp"

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "server/io/tls_context.hpp"

namespace sluice::server {

namespace {

// The SRTP profiles offered in use_srtp, preferred first: AES-GCM authenticates and encrypts in
// one pass (AES-NI and CLMUL) where AES-CM + HMAC-SHA1 runs two, and its 16-byte tag is what every
// current browser offers first; AES128_CM_SHA1_80 is the one RFC 8827 makes mandatory, for peers
// without GCM.
constexpr const char* kSrtpProfiles = "SRTP_AEAD_AES_128_GCM:SRTP_AES128_CM_SHA1_80";
// ECDHE only (forward secrecy), AEAD first. Our certificate is ECDSA, so as the server only the
// ECDSA suites can be chosen; the RSA ones are for the active role against a peer with an RSA key.
constexpr const char* kCiphers =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:"
    "ECDHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-AES256-GCM-SHA384:ECDHE-RSA-CHACHA20-POLY1305:"
    "ECDHE-ECDSA-AES128-SHA:ECDHE-RSA-AES128-SHA";
constexpr const char* kGroups = "X25519:P-256:P-384";

// Any certificate passes here: a WebRTC peer's is self-signed by design, and what binds it to the
// session is its fingerprint in the SDP, which each DtlsTransport checks with its own callback.
int accept_any(int, X509_STORE_CTX*) { return 1; }

Error failed(const char* what) {
  return Error(Errc::Config, std::string("WebRTC certificate: ") + what + ": " + openssl_errors());
}

char hex_upper(unsigned v) { return "0123456789ABCDEF"[v & 15]; }

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// A random CN, so that certificates of different processes never look alike.
std::string random_common_name() {
  uint8_t r[8] = {};
  if (RAND_bytes(r, sizeof r) != 1) return "sluice";
  std::string cn = "sluice-";
  for (uint8_t b : r) {
    cn += static_cast<char>(hex_upper(b >> 4) | 0x20);  // lower case
    cn += static_cast<char>(hex_upper(b) | 0x20);
  }
  return cn;
}

Result<X509*> self_signed(EVP_PKEY* key) {
  X509* x = X509_new();
  if (!x) return failed("X509_new");
  uint64_t serial = 0;
  RAND_bytes(reinterpret_cast<unsigned char*>(&serial), sizeof serial);
  serial &= 0x7FFFFFFFFFFFFFFFull;  // a positive INTEGER
  X509_NAME* name = X509_get_subject_name(x);
  const std::string cn = random_common_name();
  const bool ok = X509_set_version(x, X509_VERSION_3) == 1 &&
                  ASN1_INTEGER_set_uint64(X509_get_serialNumber(x), serial) == 1 &&
                  X509_gmtime_adj(X509_getm_notBefore(x), -WebrtcCertificate::kValidBeforeSeconds) != nullptr &&
                  X509_gmtime_adj(X509_getm_notAfter(x), WebrtcCertificate::kValidAfterSeconds) != nullptr &&
                  X509_set_pubkey(x, key) == 1 &&
                  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                                             reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0) == 1 &&
                  X509_set_issuer_name(x, name) == 1 && X509_sign(x, key, EVP_sha256()) > 0;
  if (!ok) {
    X509_free(x);
    return failed("self-signing");
  }
  return x;
}

SSL_CTX* dtls_context(X509* cert, EVP_PKEY* key) {
  SSL_CTX* ctx = SSL_CTX_new(DTLS_method());  // both roles: a=setup decides per session
  if (!ctx) return nullptr;
  const bool ok = SSL_CTX_set_min_proto_version(ctx, DTLS1_2_VERSION) == 1 &&
                  SSL_CTX_set_max_proto_version(ctx, DTLS1_2_VERSION) == 1 && SSL_CTX_use_certificate(ctx, cert) == 1 &&
                  SSL_CTX_use_PrivateKey(ctx, key) == 1 && SSL_CTX_check_private_key(ctx) == 1 &&
                  SSL_CTX_set_cipher_list(ctx, kCiphers) == 1 && SSL_CTX_set1_groups_list(ctx, kGroups) == 1 &&
                  SSL_CTX_set_tlsext_use_srtp(ctx, kSrtpProfiles) == 0;  // 0 is success here
  if (!ok) {
    SSL_CTX_free(ctx);
    return nullptr;
  }
  // No cookie exchange (SSL_OP_COOKIE_EXCHANGE): DTLS only ever reaches a peer whose address ICE
  // proved with a STUN check keyed by the session's ice-pwd, so a spoofed ClientHello cannot
  // make us answer a stranger. No resumption: every session is a new one with its own keys.
  SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE |
                               SSL_OP_NO_TICKET | SSL_OP_NO_QUERY_MTU);
  SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, accept_any);
  return ctx;
}

}  // namespace

Result<std::shared_ptr<const WebrtcCertificate>> WebrtcCertificate::generate() {
  ERR_clear_error();
  std::shared_ptr<WebrtcCertificate> out(new WebrtcCertificate());
  out->key_ = EVP_EC_gen("P-256");
  if (!out->key_) return failed("P-256 key");
  auto cert = self_signed(out->key_);
  if (!cert) return std::move(cert).error();
  out->cert_ = *cert;
  const auto fp = certificate_sha256(out->cert_);
  if (!fp) return failed("fingerprint");
  out->fingerprint_ = format_fingerprint(*fp);
  out->ctx_ = dtls_context(out->cert_, out->key_);
  if (!out->ctx_) return failed("DTLS context");
  return std::shared_ptr<const WebrtcCertificate>(std::move(out));
}

WebrtcCertificate::~WebrtcCertificate() {
  SSL_CTX_free(ctx_);
  X509_free(cert_);
  EVP_PKEY_free(key_);
}

std::optional<Sha256Fingerprint> certificate_sha256(X509* cert) {
  Sha256Fingerprint fp{};
  unsigned len = 0;
  if (!cert || X509_digest(cert, EVP_sha256(), fp.data(), &len) != 1 || len != fp.size()) return std::nullopt;
  return fp;
}

std::string format_fingerprint(const Sha256Fingerprint& fp) {
  std::string out;
  out.reserve(fp.size() * 3);
  for (uint8_t b : fp) {
    if (!out.empty()) out += ':';
    out += hex_upper(b >> 4);
    out += hex_upper(b);
  }
  return out;
}

std::optional<Sha256Fingerprint> parse_fingerprint(std::string_view text) {
  Sha256Fingerprint fp{};
  if (text.size() != fp.size() * 3 - 1) return std::nullopt;
  for (size_t i = 0; i < fp.size(); ++i) {
    const int hi = hex_value(text[3 * i]), lo = hex_value(text[3 * i + 1]);
    if (hi < 0 || lo < 0 || (i + 1 < fp.size() && text[3 * i + 2] != ':')) return std::nullopt;
    fp[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return fp;
}

}  // namespace sluice::server
