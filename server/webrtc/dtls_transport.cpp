#include "server/webrtc/dtls_transport.hpp"

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <algorithm>
#include <array>
#include <string_view>
#include <sys/time.h>

#include "server/io/tls_context.hpp"

namespace sluice::server {

namespace {

// RFC 5764 4.2: the exporter label for DTLS-SRTP keys.
constexpr std::string_view kExporterLabel = "EXTRACTOR-dtls_srtp";

// The output BIO: every write OpenSSL makes is one datagram. During the handshake OpenSSL writes
// through a buffering BIO of its own that it flushes when the next record would not fit the MTU
// and at the end of each flight, which is how it packs records into datagrams for a UDP socket;
// a plain memory BIO here would lose those boundaries.
int datagram_write(BIO* bio, const char* data, size_t len, size_t* written) {
  auto* out = static_cast<DtlsTransport::Datagrams*>(BIO_get_data(bio));
  const auto* bytes = reinterpret_cast<const uint8_t*>(data);
  out->emplace_back(bytes, bytes + len);
  *written = len;
  return 1;
}

// Flushes succeed; nothing is ever pending; every datagram control (MTU queries, peer address,
// timeouts) answers 0, which OpenSSL reads as "not supported".
long datagram_ctrl(BIO*, int cmd, long, void*) { return cmd == BIO_CTRL_FLUSH ? 1 : 0; }

int datagram_create(BIO* bio) {
  BIO_set_init(bio, 1);
  return 1;
}

const BIO_METHOD* datagram_method() {
  static BIO_METHOD* method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "sluice DTLS output");
    BIO_meth_set_write_ex(m, datagram_write);
    BIO_meth_set_ctrl(m, datagram_ctrl);
    BIO_meth_set_create(m, datagram_create);
    return m;
  }();
  return method;
}

bool same_fingerprint(const std::optional<Sha256Fingerprint>& got, const Sha256Fingerprint& want) {
  // Constant time: a comparison that stops at the first different byte tells a timing peer how
  // much of a forged certificate's hash was right.
  return got && CRYPTO_memcmp(got->data(), want.data(), want.size()) == 0;
}

}  // namespace

Result<std::unique_ptr<DtlsTransport>> DtlsTransport::create(std::shared_ptr<const WebrtcCertificate> certificate,
                                                             DtlsConfig config) {
  const auto expected = parse_fingerprint(config.remote_fingerprint);
  if (!expected) {
    return Error(Errc::Config, "DTLS: the offer's fingerprint '" + config.remote_fingerprint.substr(0, 120) +
                                   "' is not a SHA-256 fingerprint");
  }
  if (!certificate) return Error(Errc::Config, "DTLS: no certificate");
  std::unique_ptr<DtlsTransport> out(new DtlsTransport(std::move(certificate), std::move(config)));
  out->expected_ = *expected;
  if (auto r = out->reset(); !r) return std::move(r).error();
  return out;
}

DtlsTransport::DtlsTransport(std::shared_ptr<const WebrtcCertificate> certificate, DtlsConfig config)
    : certificate_(std::move(certificate)), config_(std::move(config)) {}

DtlsTransport::~DtlsTransport() {
  if (ssl_) SSL_free(ssl_);  // frees both BIOs
}

Result<void> DtlsTransport::reset() {
  if (ssl_) SSL_free(ssl_);
  ssl_ = nullptr;
  pending_.clear();
  ERR_clear_error();
  ssl_ = SSL_new(certificate_->ssl_context());
  in_ = BIO_new(BIO_s_mem());
  out_ = BIO_new(datagram_method());
  if (!ssl_ || !in_ || !out_) {
    SSL_free(ssl_);  // not yet owning the BIOs
    BIO_free(in_);
    BIO_free(out_);
    ssl_ = nullptr;
    in_ = out_ = nullptr;
    return fail(Errc::Config, "DTLS: " + openssl_errors());
  }
  BIO_set_data(out_, &pending_);
  BIO_set_mem_eof_return(in_, -1);  // an empty input means "nothing yet", not end of file
  SSL_set_bio(ssl_, in_, out_);     // the SSL owns both now
  SSL_set_app_data(ssl_, this);
  SSL_set_verify(ssl_, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, &DtlsTransport::on_verify);
  // The MTU is ours to say: nothing to query on a memory BIO.
  SSL_set_options(ssl_, SSL_OP_NO_QUERY_MTU);
  DTLS_set_link_mtu(ssl_, static_cast<long>(kMtu));
  DTLS_set_timer_cb(ssl_, &DtlsTransport::on_timer);
  if (config_.role == DtlsRole::Passive) {
    SSL_set_accept_state(ssl_);
  } else {
    SSL_set_connect_state(ssl_);
  }
  return {};
}

// Retransmission timer: OpenSSL asks for the first duration with 0, then for each next one.
unsigned DtlsTransport::on_timer(SSL* ssl, unsigned previous_us) {
  const auto* self = static_cast<const DtlsTransport*>(SSL_get_app_data(ssl));
  const uint64_t initial = uint64_t{self ? self->config_.initial_timeout_ms : 1000} * 1000;
  if (previous_us == 0) return static_cast<unsigned>(std::min<uint64_t>(initial, kMaxTimeoutMs * 1000ull));
  return static_cast<unsigned>(std::min<uint64_t>(uint64_t{previous_us} * 2, kMaxTimeoutMs * 1000ull));
}

// The peer's certificate is the one the offer named, or the handshake stops here with a
// bad_certificate alert: no keys are ever derived with a peer the signalling did not vouch for.
// The leaf is what the fingerprint names, whatever chain comes with it.
int DtlsTransport::on_verify(int, X509_STORE_CTX* store) {
  auto* ssl = static_cast<SSL*>(X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx()));
  auto* self = ssl ? static_cast<DtlsTransport*>(SSL_get_app_data(ssl)) : nullptr;
  if (!self) return 0;
  if (same_fingerprint(certificate_sha256(X509_STORE_CTX_get0_cert(store)), self->expected_)) return 1;
  self->fingerprint_mismatch_ = true;
  return 0;
}

Error DtlsTransport::fail(Errc code, std::string reason) {
  state_ = DtlsState::Failed;
  failure_ = reason;
  return Error(code, std::move(reason));
}

Error DtlsTransport::openssl_failure(const char* what, int rc) {
  const int err = SSL_get_error(ssl_, rc);
  std::string why = openssl_errors();
  if (fingerprint_mismatch_) {
    return fail(Errc::Rejected, "DTLS " + std::string(what) + ": the peer's certificate is not the one of the " +
                                    "offer's a=fingerprint (" + config_.remote_fingerprint + ")");
  }
  if (err == SSL_ERROR_ZERO_RETURN) return fail(Errc::Closed, "DTLS: the peer closed the association (close_notify)");
  return fail(Errc::Malformed, "DTLS " + std::string(what) + ": " + why);
}

void DtlsTransport::take_output(Datagrams& out) {
  for (auto& d : pending_) out.push_back(std::move(d));
  pending_.clear();
}

Result<void> DtlsTransport::start(Datagrams& out) {
  if (config_.role == DtlsRole::Passive || state_ != DtlsState::New) return {};
  state_ = DtlsState::Handshaking;
  auto r = advance(out);
  if (!r) return std::move(r).error();
  return {};
}

Result<DtlsEvent> DtlsTransport::on_datagram(std::span<const uint8_t> in, Datagrams& out) {
  switch (state_) {
    case DtlsState::Failed: return Error(Errc::Closed, "DTLS: the association has failed: " + failure_);
    case DtlsState::Closed: return DtlsEvent::None;  // late retransmissions
    case DtlsState::New:
      if (config_.role == DtlsRole::Active) return Error(Errc::BadState, "DTLS: start() first");
      break;
    default: break;
  }
  if (in.empty()) return DtlsEvent::None;
  // One datagram at a time: OpenSSL reads all the BIO holds as one datagram, so nothing of an
  // earlier one may stay behind (it never should: every call reads until OpenSSL wants more).
  if (BIO_ctrl_pending(in_) > 0) (void)BIO_reset(in_);
  if (BIO_write(in_, in.data(), static_cast<int>(in.size())) != static_cast<int>(in.size())) {
    return fail(Errc::Io, "DTLS: cannot buffer the datagram");
  }
  return advance(out);
}

Result<DtlsEvent> DtlsTransport::advance(Datagrams& out) {
  if (state_ == DtlsState::Connected) {
    auto r = read_records();
    take_output(out);  // a resent final flight, our close_notify
    return r;
  }
  ERR_clear_error();
  const int rc = SSL_do_handshake(ssl_);
  if (rc == 1) {
    auto r = finish_handshake();
    if (!r) return r;
    take_output(out);  // the passive side's last flight
    if (auto more = read_records(); !more || *more == DtlsEvent::Closed) return more;
    take_output(out);
    return DtlsEvent::Connected;
  }
  const int err = SSL_get_error(ssl_, rc);
  if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
    if (!pending_.empty()) state_ = DtlsState::Handshaking;  // a ClientHello was answered
    take_output(out);
    return DtlsEvent::None;
  }
  if (state_ == DtlsState::New) {
    // Before any valid ClientHello: the datagram is refused, the association starts over, and
    // nothing (not even an alert) goes to whoever sent it.
    Error e = openssl_failure("handshake", rc);
    if (auto r = reset(); !r) return std::move(r).error();
    state_ = DtlsState::New;
    failure_.clear();
    fingerprint_mismatch_ = false;
    return e;
  }
  Error e = openssl_failure("handshake", rc);
  take_output(out);  // the alert that tells the peer why
  return e;
}

Result<DtlsEvent> DtlsTransport::finish_handshake() {
  // Checked again now that the handshake is over: the callback may not have seen the leaf if a
  // chain of several certificates came first.
  X509* peer = SSL_get0_peer_certificate(ssl_);
  if (!peer) return fail(Errc::Rejected, "DTLS: the peer sent no certificate");
  if (!same_fingerprint(certificate_sha256(peer), expected_)) {
    pending_.clear();
    return fail(Errc::Rejected, "DTLS: the peer's certificate is not the one of the offer's a=fingerprint (" +
                                    config_.remote_fingerprint + ")");
  }
  const SRTP_PROTECTION_PROFILE* p = SSL_get_selected_srtp_profile(ssl_);
  if (!p || (p->id != SRTP_AEAD_AES_128_GCM && p->id != SRTP_AES128_CM_SHA1_80)) {
    pending_.clear();
    return fail(Errc::Rejected,
                "DTLS: no SRTP profile agreed (use_srtp): the peer offered neither "
                "SRTP_AEAD_AES_128_GCM nor SRTP_AES128_CM_SHA1_80");
  }
  const auto profile = static_cast<SrtpProfile>(p->id);
  const size_t key = srtp_key_length(profile), salt = srtp_salt_length(profile);
  std::array<uint8_t, 2 * SrtpKeys::kMaxKeySalt> material{};
  const size_t total = 2 * (key + salt);
  if (SSL_export_keying_material(ssl_, material.data(), total, kExporterLabel.data(), kExporterLabel.size(), nullptr, 0,
                                 0) != 1) {
    pending_.clear();
    return fail(Errc::Malformed, "DTLS: keying material export: " + openssl_errors());
  }
  // RFC 5764 4.2: client key, server key, client salt, server salt.
  const uint8_t* client_key = material.data();
  const uint8_t* server_key = client_key + key;
  const uint8_t* client_salt = server_key + key;
  const uint8_t* server_salt = client_salt + salt;
  const bool server = config_.role == DtlsRole::Passive;
  keys_.profile = profile;
  keys_.size = key + salt;
  auto put = [&](std::array<uint8_t, SrtpKeys::kMaxKeySalt>& dst, const uint8_t* k, const uint8_t* s) {
    std::copy(k, k + key, dst.begin());
    std::copy(s, s + salt, dst.begin() + static_cast<std::ptrdiff_t>(key));
  };
  put(keys_.local, server ? server_key : client_key, server ? server_salt : client_salt);
  put(keys_.remote, server ? client_key : server_key, server ? client_salt : server_salt);
  OPENSSL_cleanse(material.data(), material.size());
  state_ = DtlsState::Connected;
  return DtlsEvent::Connected;
}

// After the handshake: the peer's records are read and dropped (there is no data channel), a
// retransmitted flight of the peer makes OpenSSL resend ours, close_notify ends it.
Result<DtlsEvent> DtlsTransport::read_records() {
  std::array<uint8_t, 2048> sink;
  for (;;) {
    ERR_clear_error();
    const int n = SSL_read(ssl_, sink.data(), static_cast<int>(sink.size()));
    if (n > 0) continue;
    const int err = SSL_get_error(ssl_, n);
    if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) return DtlsEvent::None;
    if (err == SSL_ERROR_ZERO_RETURN) {
      state_ = DtlsState::Closed;
      (void)SSL_shutdown(ssl_);  // our close_notify in answer
      return DtlsEvent::Closed;
    }
    return openssl_failure("read", n);
  }
}

std::optional<uint64_t> DtlsTransport::timeout_ms() const {
  if (state_ == DtlsState::Failed || state_ == DtlsState::Closed) return std::nullopt;
  timeval tv{};
  if (DTLSv1_get_timeout(ssl_, &tv) != 1) return std::nullopt;
  return static_cast<uint64_t>(tv.tv_sec) * 1000 + static_cast<uint64_t>(tv.tv_usec + 999) / 1000;
}

Result<void> DtlsTransport::on_timeout(Datagrams& out) {
  if (state_ == DtlsState::Failed) return Error(Errc::Closed, "DTLS: the association has failed: " + failure_);
  if (state_ == DtlsState::Closed || state_ == DtlsState::New) return {};
  ERR_clear_error();
  const int rc = DTLSv1_handle_timeout(ssl_);
  if (rc < 0) {
    pending_.clear();
    return fail(Errc::Closed,
                "DTLS: no answer after " + std::to_string(retransmissions_) + " retransmissions: " + openssl_errors());
  }
  if (rc > 0) ++retransmissions_;
  take_output(out);
  return {};
}

void DtlsTransport::close(Datagrams& out) {
  if (state_ == DtlsState::Connected) {
    ERR_clear_error();
    (void)SSL_shutdown(ssl_);
    take_output(out);
  }
  if (state_ != DtlsState::Failed) state_ = DtlsState::Closed;
}

std::string DtlsTransport::summary() const {
  std::string out = SSL_get_version(ssl_);
  if (const char* cipher = SSL_get_cipher_name(ssl_)) out += std::string("/") + cipher;
  if (state_ == DtlsState::Connected || state_ == DtlsState::Closed) {
    out += "/" + std::string(srtp_profile_name(keys_.profile));
  }
  return out;
}

}  // namespace sluice::server
