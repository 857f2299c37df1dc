#include "server/io/tls_transform.hpp"

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <string_view>

namespace sluice::server {

namespace {

// The output BIO: OpenSSL's records are appended to the transform's pending vector as they are
// made, with no memory BIO in between (which zero-fills its growth and costs one more copy and
// one more clearing per flush: a third of a TLS player's cost at 500 players).
int sink_write(BIO* bio, const char* data, size_t len, size_t* written) {
  auto* out = static_cast<ByteBuffer*>(BIO_get_data(bio));
  const auto* bytes = reinterpret_cast<const uint8_t*>(data);
  out->insert(out->end(), bytes, bytes + len);
  *written = len;
  return 1;
}

long sink_ctrl(BIO*, int cmd, long, void*) { return cmd == BIO_CTRL_FLUSH ? 1 : 0; }

int sink_create(BIO* bio) {
  BIO_set_init(bio, 1);
  return 1;
}

const BIO_METHOD* sink_method() {
  static BIO_METHOD* method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "sluice TLS output");
    BIO_meth_set_write_ex(m, sink_write);
    BIO_meth_set_ctrl(m, sink_ctrl);
    BIO_meth_set_create(m, sink_create);
    return m;
  }();
  return method;
}

// Moves what OpenSSL made for the peer into `out`: by swapping when `out` is empty (no copy).
void drain(ByteBuffer& pending, ByteBuffer& out) {
  if (pending.empty()) return;
  if (out.empty()) {
    out.swap(pending);
  } else {
    out.insert(out.end(), pending.begin(), pending.end());
  }
  pending.clear();
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// RFC 8446 section 4.6.3: KeyUpdate (24), 1 byte of body, update_not_requested (0).
constexpr uint8_t kKeyUpdateNotRequested[] = {24, 0, 0, 1, 0};
constexpr uint8_t kKeyUpdateType = 24;
constexpr uint8_t kUpdateRequested = 1;
// Section 6: a warning-level close_notify.
constexpr uint8_t kCloseNotify[] = {1, 0};

// The whole records in `made`, false if it is not a sequence of them.
bool split_records(std::span<const uint8_t> made, std::vector<std::span<const uint8_t>>& records) {
  while (!made.empty()) {
    if (made.size() < TlsRecordSealer::kHeaderSize) return false;
    const size_t size = TlsRecordSealer::kHeaderSize + (size_t{made[3]} << 8 | made[4]);
    if (size > made.size() || size < TlsRecordSealer::kOverhead) return false;
    records.push_back(made.first(size));
    made = made.subspan(size);
  }
  return !records.empty();
}

// Whether `sealer` makes OpenSSL's `records` of `plain`: any KeyUpdates first (then the next key),
// the first data record byte for byte, the others by their sizes. On true the sealer's sequence
// follows the last record.
bool same_records(TlsRecordSealer& sealer, std::span<const std::span<const uint8_t>> records,
                  std::span<const uint8_t> plain) {
  ByteBuffer mine;
  size_t used = 0;
  for (const auto record : records) {
    const size_t length = record.size() - TlsRecordSealer::kOverhead;
    const uint64_t sequence = sealer.sequence();
    if (used == 0 && length == sizeof kKeyUpdateNotRequested) {
      mine.clear();
      if (!sealer.seal(kKeyUpdateNotRequested, TlsRecordSealer::kHandshake, mine)) return false;
      if (std::equal(mine.begin(), mine.end(), record.begin(), record.end())) {
        if (!sealer.update_key()) return false;
        continue;
      }
      sealer.set_sequence(sequence);  // five bytes of data, then
    }
    if (length > plain.size() - used) return false;
    if (used == 0) {
      mine.clear();
      if (!sealer.seal(plain.first(length), TlsRecordSealer::kApplicationData, mine)) return false;
      if (!std::equal(mine.begin(), mine.end(), record.begin(), record.end())) return false;
    } else {
      sealer.set_sequence(sequence + 1);
    }
    used += length;
  }
  return used == plain.size();
}

}  // namespace

void TlsTransform::capture_secrets(SSL_CTX* ctx) { SSL_CTX_set_keylog_callback(ctx, &TlsTransform::on_key_log); }

// Key log lines are "<label> <client random, hex> <secret, hex>" (NSS's format). The write side's
// first application traffic secret is the server's on a server, the client's on a client.
void TlsTransform::on_key_log(const SSL* ssl, const char* line) {
  auto* self = static_cast<TlsTransform*>(SSL_get_app_data(ssl));
  if (!self) return;
  const std::string_view wanted = self->context_->is_server() ? "SERVER_TRAFFIC_SECRET_0 " : "CLIENT_TRAFFIC_SECRET_0 ";
  const std::string_view l(line);
  if (!l.starts_with(wanted)) return;
  const std::string_view hex = l.substr(l.rfind(' ') + 1);
  if (hex.empty() || hex.size() % 2 != 0 || hex.size() > 2 * EVP_MAX_MD_SIZE) return;
  std::vector<uint8_t> secret(hex.size() / 2);
  for (size_t i = 0; i < secret.size(); ++i) {
    const int hi = hex_digit(hex[2 * i]), lo = hex_digit(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return;
    secret[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  OPENSSL_cleanse(self->write_secret_.data(), self->write_secret_.size());
  self->write_secret_ = std::move(secret);
}

// Once Sluice seals the records: notes a KeyUpdate that asks for ours (answered after the read).
void TlsTransform::on_message(int write_p, int, int content_type, const void* buf, size_t len, SSL*, void* arg) {
  const auto* b = static_cast<const uint8_t*>(buf);
  if (write_p == 0 && content_type == SSL3_RT_HANDSHAKE && len >= 5 && b[0] == kKeyUpdateType &&
      b[4] == kUpdateRequested) {
    static_cast<TlsTransform*>(arg)->key_update_asked_ = true;
  }
}

TlsTransform::TlsTransform(std::shared_ptr<const TlsContext> context, const std::string& server_name)
    : context_(std::move(context)) {
  ssl_ = SSL_new(context_->get());
  in_ = BIO_new(BIO_s_mem());
  out_ = BIO_new(sink_method());
  if (out_) BIO_set_data(out_, &pending_);
  if (!ssl_ || !in_ || !out_) {
    failed_ = true;
    return;
  }
  // An empty memory BIO means "nothing yet", not end of file.
  BIO_set_mem_eof_return(in_, -1);
  SSL_set_bio(ssl_, in_, out_);  // the SSL owns both now
  SSL_set_app_data(ssl_, this);  // for the key log callback
  if (context_->is_server()) {
    SSL_set_accept_state(ssl_);
  } else {
    if (!server_name.empty()) {
      SSL_set_tlsext_host_name(ssl_, server_name.c_str());
      if (context_->verifies()) SSL_set1_host(ssl_, server_name.c_str());
    }
    SSL_set_connect_state(ssl_);
    (void)advance();  // the ClientHello, for take_output()
  }
}

TlsTransform::~TlsTransform() {
  OPENSSL_cleanse(write_secret_.data(), write_secret_.size());
  if (ssl_) {
    SSL_free(ssl_);  // frees the BIOs
  } else {
    BIO_free(in_);
    BIO_free(out_);
  }
}

Error TlsTransform::failure(const char* what, int rc) {
  failed_ = true;
  const int err = SSL_get_error(ssl_, rc);
  if (err == SSL_ERROR_ZERO_RETURN) return Error(Errc::Closed, "TLS: the peer closed the session (close_notify)");
  std::string why = openssl_errors();
  if (!context_->is_server() && context_->verifies()) {
    const long v = SSL_get_verify_result(ssl_);
    if (v != X509_V_OK) {
      return Error(Errc::Rejected,
                   std::string("TLS ") + what + ": certificate verify failed: " + X509_verify_cert_error_string(v));
    }
  }
  return Error(Errc::Malformed, std::string("TLS ") + what + ": " + why);
}

Result<void> TlsTransform::advance() {
  if (failed_) return Error(Errc::Closed, "TLS: the session has failed");
  if (!handshake_done_) {
    ERR_clear_error();
    const int rc = SSL_do_handshake(ssl_);
    if (rc != 1) {
      const int err = SSL_get_error(ssl_, rc);
      if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) return {};
      return failure("handshake", rc);
    }
    handshake_done_ = true;
    if (!write_secret_.empty() && SSL_version(ssl_) == TLS1_3_VERSION) records_ = Records::Probe;
  }
  return {};
}

Result<void> TlsTransform::feed(std::span<const uint8_t> cipher, std::vector<uint8_t>& plain) {
  if (failed_) return Error(Errc::Closed, "TLS: the session has failed");
  if (!cipher.empty() &&
      BIO_write(in_, cipher.data(), static_cast<int>(cipher.size())) != static_cast<int>(cipher.size())) {
    failed_ = true;
    return Error(Errc::Io, "TLS: cannot buffer the input");
  }
  const bool was_done = handshake_done_;
  if (auto r = advance(); !r) return r;
  if (!handshake_done_) return {};
  if (!was_done && !waiting_.empty()) {
    // Written before the handshake finished: their records go out with take_output().
    std::vector<uint8_t> early = std::move(waiting_);
    waiting_.clear();
    if (auto r = write_records(early); !r) return r;
  }
  uint8_t buf[16384];
  for (;;) {
    ERR_clear_error();
    const int n = SSL_read(ssl_, buf, sizeof buf);
    if (n > 0) {
      plain.insert(plain.end(), buf, buf + n);
      continue;
    }
    const int err = SSL_get_error(ssl_, n);
    if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) break;
    return failure("read", n);
  }
  if (records_ == Records::Sluice) {
    dropped_.clear();  // anything OpenSSL wrote (its own KeyUpdate) has its stale key
    if (key_update_asked_) return answer_key_update();
  }
  return {};
}

Result<void> TlsTransform::answer_key_update() {
  key_update_asked_ = false;
  if (closed_) return {};
  return update_write_key(pending_);
}

Result<void> TlsTransform::update_write_key(ByteBuffer& out) {
  // The KeyUpdate goes under the old key; every record after it under the new one.
  if (!sealer_->seal(kKeyUpdateNotRequested, TlsRecordSealer::kHandshake, out) || !sealer_->update_key()) {
    failed_ = true;
    return Error(Errc::Io, "TLS: cannot update the write key: " + openssl_errors());
  }
  return {};
}

Result<void> TlsTransform::write(std::span<const std::span<const uint8_t>> pieces, ByteBuffer& cipher_out) {
  if (failed_) return Error(Errc::Closed, "TLS: the session has failed");
  if (closed_) return Error(Errc::Closed, "TLS: the session is closed (close_notify sent)");
  size_t total = 0;
  for (const auto& p : pieces) total += p.size();
  if (total == 0) return {};
  if (records_ == Records::Sluice) {
    drain(pending_, cipher_out);  // a KeyUpdate answer not taken yet goes first
    // A key must not seal too many records (RFC 8446 section 5.5: about 2^24.5 for AES-GCM); a
    // relay or player connection can live for weeks.
    if (sealer_->sequence() >= records_per_key_) {
      if (auto r = update_write_key(cipher_out); !r) return r;
    }
    if (!sealer_->seal(pieces, total, TlsRecordSealer::kApplicationData, cipher_out)) {
      failed_ = true;
      return Error(Errc::Io, "TLS: cannot seal a record: " + openssl_errors());
    }
    return {};
  }
  // OpenSSL makes the records: the plaintext in one piece, so that they are large.
  gathered_.clear();
  gathered_.reserve(total);
  for (const auto& p : pieces) gathered_.insert(gathered_.end(), p.begin(), p.end());
  return write(std::span<const uint8_t>(gathered_), cipher_out);
}

Result<void> TlsTransform::write(std::span<const uint8_t> plain, ByteBuffer& cipher_out) {
  if (failed_) return Error(Errc::Closed, "TLS: the session has failed");
  if (!handshake_done_) {
    waiting_.insert(waiting_.end(), plain.begin(), plain.end());
    return {};
  }
  if (records_ == Records::Sluice) {
    const std::span<const uint8_t> one[] = {plain};
    return write(std::span<const std::span<const uint8_t>>(one), cipher_out);
  }
  if (auto r = write_records(plain); !r) return r;
  drain(pending_, cipher_out);
  return {};
}

Result<void> TlsTransform::write_records(std::span<const uint8_t> plain) {
  const size_t first_record = pending_.size();
  const std::span<const uint8_t> all = plain;
  while (!plain.empty()) {
    ERR_clear_error();
    const int n = SSL_write(ssl_, plain.data(), static_cast<int>(std::min<size_t>(plain.size(), 1 << 30)));
    if (n <= 0) return failure("write", n);
    plain = plain.subspan(static_cast<size_t>(n));
  }
  if (records_ == Records::Probe) take_over_records(all, first_record);
  return {};
}

// The probe: OpenSSL has just sealed `plain` into pending_ from `first_record` on. If Sluice,
// with the logged secret, makes the same records, it makes every record after these; else OpenSSL
// keeps doing it (the connection works either way). A client may ask for a KeyUpdate before the
// first write: OpenSSL's answer then comes first (before the records or in take_output()) and the
// data is under the next secret, so up to two updates are tried, not only the logged secret.
void TlsTransform::take_over_records(std::span<const uint8_t> plain, size_t first_record) {
  records_ = Records::OpenSsl;
  std::vector<uint8_t> secret = std::move(write_secret_);
  write_secret_.clear();
  const SSL_CIPHER* suite = SSL_get_current_cipher(ssl_);
  std::vector<std::span<const uint8_t>> records;
  if (suite && split_records(std::span<const uint8_t>(pending_).subspan(first_record), records)) {
    // Without session tickets OpenSSL's first application record is number 0; a few more are
    // tried in case a version sends something first.
    for (int updates = 0; updates < 3 && !sealer_; ++updates) {
      for (uint64_t sequence = 0; sequence < 4 && !sealer_; ++sequence) {
        auto sealer = TlsRecordSealer::make(SSL_CIPHER_get_protocol_id(suite), secret);
        if (!sealer) break;
        bool updated = true;
        for (int u = 0; u < updates && updated; ++u) updated = sealer->update_key();
        sealer->set_sequence(sequence);
        if (updated && same_records(*sealer, records, plain)) sealer_ = std::move(sealer);
      }
    }
  }
  OPENSSL_cleanse(secret.data(), secret.size());
  if (!sealer_) return;
  records_ = Records::Sluice;
  BIO_set_data(out_, &dropped_);  // from now on what OpenSSL writes is not sent
  SSL_set_msg_callback(ssl_, &TlsTransform::on_message);
  SSL_set_msg_callback_arg(ssl_, this);
}

void TlsTransform::take_output(ByteBuffer& out) { drain(pending_, out); }

void TlsTransform::shutdown() {
  if (!ssl_ || failed_ || closed_) return;
  if (records_ == Records::Sluice) {
    closed_ = sealer_->seal(kCloseNotify, TlsRecordSealer::kAlert, pending_);
    return;
  }
  SSL_shutdown(ssl_);
}

std::string TlsTransform::protocol() const { return ssl_ ? SSL_get_version(ssl_) : ""; }

std::string TlsTransform::summary() const {
  if (!ssl_ || !handshake_done_) return "handshake";
  const SSL_CIPHER* c = SSL_get_current_cipher(ssl_);
  return protocol() + "/" + (c ? SSL_CIPHER_get_name(c) : "?") + "/" + (seals_own_records() ? "sluice" : "openssl");
}

std::string TlsTransform::server_name() const {
  const char* n = ssl_ ? SSL_get_servername(ssl_, TLSEXT_NAMETYPE_host_name) : nullptr;
  return n ? n : "";
}

std::string TlsTransform::peer_subject() const {
  X509* cert = ssl_ ? SSL_get1_peer_certificate(ssl_) : nullptr;
  if (!cert) return "";
  char buf[512];
  X509_NAME_oneline(X509_get_subject_name(cert), buf, sizeof buf);
  X509_free(cert);
  return buf;
}

}  // namespace sluice::server
