#include "bench/load/dtls_client.hpp"

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <strings.h>
#include <sys/time.h>

#include <array>

namespace sluice::bench {

namespace {

std::string openssl_error_text() {
  std::string out;
  while (unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    if (!out.empty()) out += "; ";
    out += buf;
  }
  return out.empty() ? "no OpenSSL error queued" : out;
}

Error failed(const std::string& what) {
  return Error(Errc::Config, "DTLS identity: " + what + ": " + openssl_error_text());
}

// Each write OpenSSL makes is one datagram: it packs the records of a flight up to the MTU itself
// and flushes, as for a UDP socket. A memory BIO would merge them.
int datagram_write(BIO* bio, const char* data, size_t len, size_t* written) {
  auto* out = static_cast<DtlsClient::Datagrams*>(BIO_get_data(bio));
  const auto* bytes = reinterpret_cast<const uint8_t*>(data);
  out->emplace_back(bytes, bytes + len);
  *written = len;
  return 1;
}

long datagram_ctrl(BIO*, int cmd, long, void*) { return cmd == BIO_CTRL_FLUSH ? 1 : 0; }

int datagram_create(BIO* bio) {
  BIO_set_init(bio, 1);
  return 1;
}

const BIO_METHOD* datagram_method() {
  static BIO_METHOD* method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "sluice-bench DTLS output");
    BIO_meth_set_write_ex(m, datagram_write);
    BIO_meth_set_ctrl(m, datagram_ctrl);
    BIO_meth_set_create(m, datagram_create);
    return m;
  }();
  return method;
}

X509* self_signed(EVP_PKEY* key) {
  X509* x = X509_new();
  if (!x) return nullptr;
  uint64_t serial = 0;
  RAND_bytes(reinterpret_cast<unsigned char*>(&serial), sizeof serial);
  X509_NAME* name = X509_get_subject_name(x);
  const auto* cn = reinterpret_cast<const unsigned char*>("sluice-bench");
  constexpr long kDay = 24 * 3600;
  const bool ok = X509_set_version(x, X509_VERSION_3) == 1 &&
                  ASN1_INTEGER_set_uint64(X509_get_serialNumber(x), serial & 0x7FFFFFFFFFFFFFFFull) == 1 &&
                  X509_gmtime_adj(X509_getm_notBefore(x), -kDay) != nullptr &&
                  X509_gmtime_adj(X509_getm_notAfter(x), 30 * kDay) != nullptr && X509_set_pubkey(x, key) == 1 &&
                  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, cn, -1, -1, 0) == 1 &&
                  X509_set_issuer_name(x, name) == 1 && X509_sign(x, key, EVP_sha256()) > 0;
  if (ok) return x;
  X509_free(x);
  return nullptr;
}

}  // namespace

std::string certificate_fingerprint(X509* cert) {
  std::array<uint8_t, 32> fp{};
  unsigned len = 0;
  if (!cert || X509_digest(cert, EVP_sha256(), fp.data(), &len) != 1 || len != fp.size()) return {};
  std::string out;
  for (uint8_t b : fp) {
    if (!out.empty()) out += ':';
    out += "0123456789ABCDEF"[b >> 4];
    out += "0123456789ABCDEF"[b & 15];
  }
  return out;
}

Result<std::unique_ptr<DtlsIdentity>> DtlsIdentity::create(const std::string& srtp_profiles) {
  ERR_clear_error();
  std::unique_ptr<DtlsIdentity> id(new DtlsIdentity());
  id->key_ = EVP_EC_gen("P-256");
  if (!id->key_) return failed("P-256 key");
  id->cert_ = self_signed(id->key_);
  if (!id->cert_) return failed("self-signed certificate");
  id->fingerprint_ = certificate_fingerprint(id->cert_);
  SSL_CTX* ctx = SSL_CTX_new(DTLS_client_method());
  if (!ctx) return failed("SSL_CTX_new");
  id->ctx_ = ctx;
  if (SSL_CTX_set_min_proto_version(ctx, DTLS1_2_VERSION) != 1 || SSL_CTX_use_certificate(ctx, id->cert_) != 1 ||
      SSL_CTX_use_PrivateKey(ctx, id->key_) != 1) {
    return failed("certificate");
  }
  if (SSL_CTX_set_tlsext_use_srtp(ctx, srtp_profiles.c_str()) != 0) {  // 0 is success here
    return failed("use_srtp '" + srtp_profiles + "'");
  }
  SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET | SSL_OP_NO_QUERY_MTU);
  SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
  SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);  // the fingerprint is compared instead
  return id;
}

DtlsIdentity::~DtlsIdentity() {
  SSL_CTX_free(ctx_);
  X509_free(cert_);
  EVP_PKEY_free(key_);
}

Result<std::unique_ptr<DtlsClient>> DtlsClient::create(const DtlsIdentity& identity, std::string expected_fingerprint) {
  std::unique_ptr<DtlsClient> c(new DtlsClient(std::move(expected_fingerprint)));
  ERR_clear_error();
  c->ssl_ = SSL_new(identity.context());
  c->in_ = BIO_new(BIO_s_mem());
  c->out_ = BIO_new(datagram_method());
  if (!c->ssl_ || !c->in_ || !c->out_) {
    BIO_free(c->in_);
    BIO_free(c->out_);
    return Error(Errc::Config, "DTLS: " + openssl_error_text());  // ~DtlsClient frees the SSL
  }
  BIO_set_data(c->out_, &c->pending_);
  BIO_set_mem_eof_return(c->in_, -1);  // empty means "nothing yet"
  SSL_set_bio(c->ssl_, c->in_, c->out_);
  DTLS_set_link_mtu(c->ssl_, static_cast<long>(kMtu));
  SSL_set_connect_state(c->ssl_);
  return c;
}

DtlsClient::~DtlsClient() {
  if (ssl_) SSL_free(ssl_);  // and both BIOs
}

void DtlsClient::take(Datagrams& out) {
  for (auto& d : pending_) out.push_back(std::move(d));
  pending_.clear();
}

Error DtlsClient::failure(const char* what, int rc) {
  const int err = SSL_get_error(ssl_, rc);
  if (err == SSL_ERROR_ZERO_RETURN) return Error(Errc::Closed, "DTLS: the server closed the association");
  return Error(Errc::Malformed, std::string("DTLS ") + what + ": " + openssl_error_text());
}

Result<void> DtlsClient::start(Datagrams& out) {
  auto r = advance(out);
  if (!r) return std::move(r).error();
  return {};
}

Result<bool> DtlsClient::on_datagram(std::span<const uint8_t> datagram, Datagrams& out) {
  if (datagram.empty()) return false;
  if (BIO_ctrl_pending(in_) > 0) (void)BIO_reset(in_);  // one datagram at a time
  if (BIO_write(in_, datagram.data(), static_cast<int>(datagram.size())) != static_cast<int>(datagram.size())) {
    return Error(Errc::Io, "DTLS: cannot buffer a datagram");
  }
  return advance(out);
}

Result<bool> DtlsClient::advance(Datagrams& out) {
  ERR_clear_error();
  if (connected_) {
    // The server's retransmitted last flight (ours goes again), or its close_notify.
    std::array<uint8_t, 2048> sink;
    const int n = SSL_read(ssl_, sink.data(), static_cast<int>(sink.size()));
    take(out);
    const int err = n > 0 ? SSL_ERROR_NONE : SSL_get_error(ssl_, n);
    if (n > 0 || err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) return false;
    return failure("read", n);
  }
  const int rc = SSL_do_handshake(ssl_);
  take(out);
  if (rc != 1) {
    const int err = SSL_get_error(ssl_, rc);
    if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) return false;
    return failure("handshake", rc);
  }
  const std::string got = certificate_fingerprint(SSL_get0_peer_certificate(ssl_));
  if (got.empty() || strcasecmp(got.c_str(), expected_.c_str()) != 0) {
    return Error(Errc::Rejected, "DTLS: the server's certificate is not the one of the answer's a=fingerprint");
  }
  const SRTP_PROTECTION_PROFILE* profile = SSL_get_selected_srtp_profile(ssl_);
  if (!profile) return Error(Errc::Rejected, "DTLS: no SRTP profile agreed (use_srtp)");
  summary_ = std::string(SSL_get_version(ssl_)) + "/" + SSL_get_cipher_name(ssl_) + "/" + profile->name;
  connected_ = true;
  return true;
}

std::optional<uint64_t> DtlsClient::timeout_ms() const {
  timeval tv{};
  if (connected_ || DTLSv1_get_timeout(ssl_, &tv) != 1) return std::nullopt;
  return static_cast<uint64_t>(tv.tv_sec) * 1000 + static_cast<uint64_t>(tv.tv_usec + 999) / 1000;
}

Result<void> DtlsClient::on_timeout(Datagrams& out) {
  ERR_clear_error();
  const int rc = DTLSv1_handle_timeout(ssl_);
  if (rc < 0)
    return Error(Errc::Closed, "DTLS: no answer after " + std::to_string(retransmissions_) + " retransmissions");
  if (rc > 0) ++retransmissions_;
  take(out);
  return {};
}

}  // namespace sluice::bench
