#include "server/webrtc/srtp_session.hpp"

#include <srtp2/srtp.h>

#include <climits>
#include <string>

namespace sluice::server {

namespace {

// srtp_init() once per process; C++ makes the first call's initialisation thread-safe. Never
// srtp_shutdown(): sessions live until the process ends.
//
// Debian's libsrtp2 does its cryptography with NSS, and every cipher it allocates opens an NSS
// context that its dealloc closes; when the last one closes, NSS shuts down and unloads its
// modules, and the next session loads them again (dlopen, relocations: about 2 ms per libsrtp
// context, 4 ms per session). One context kept for the process's life keeps NSS loaded, and a
// session's creation costs tens of microseconds.
srtp_err_status_t library_status() {
  static const srtp_err_status_t status = [] {
    srtp_err_status_t s = srtp_init();
    if (s != srtp_err_status_ok) return s;
    static uint8_t key[30] = {};
    srtp_policy_t keeper{};
    srtp_crypto_policy_set_aes_cm_128_hmac_sha1_80(&keeper.rtp);
    srtp_crypto_policy_set_aes_cm_128_hmac_sha1_80(&keeper.rtcp);
    keeper.ssrc.type = ssrc_any_outbound;
    keeper.key = key;
    keeper.window_size = 128;
    static srtp_t never_freed = nullptr;  // static: still reachable at exit, for LeakSanitizer
    return srtp_create(&never_freed, &keeper);
  }();
  return status;
}

// RTP's header is 12 bytes, an RTCP packet's first SSRC ends at 8: what libsrtp reads before
// anything else. Shorter input is refused here so that it never reaches libsrtp.
constexpr size_t kMinRtp = 12;
constexpr size_t kMinRtcp = 8;

Error status_error(const char* what, srtp_err_status_t s) {
  const Errc code =
      (s == srtp_err_status_auth_fail || s == srtp_err_status_replay_fail || s == srtp_err_status_replay_old)
          ? Errc::Rejected
          : Errc::Malformed;
  return Error(code, std::string(srtp_status_name(s)) + " (" + what + ")");
}

void set_crypto(SrtpProfile profile, srtp_crypto_policy_t& p) {
  if (profile == SrtpProfile::AeadAes128Gcm) {
    srtp_crypto_policy_set_aes_gcm_128_16_auth(&p);
  } else {
    srtp_crypto_policy_set_aes_cm_128_hmac_sha1_80(&p);
  }
}

Result<srtp_ctx_t*> make_inbound_context(const SrtpKeys& keys, const SrtpOptions& options) {
  srtp_policy_t policy{};
  set_crypto(keys.profile, policy.rtp);
  set_crypto(keys.profile, policy.rtcp);
  policy.ssrc.type = ssrc_any_inbound;
  // libsrtp copies the key into its own context in srtp_create (and wipes it on dealloc).
  SrtpKeys copy = keys;
  policy.key = copy.remote.data();
  policy.window_size = options.replay_window;
  policy.next = nullptr;
  srtp_ctx_t* ctx = nullptr;
  const srtp_err_status_t s = srtp_create(&ctx, &policy);
  if (s != srtp_err_status_ok) {
    return Error(Errc::Config, "SRTP: inbound session: " + std::string(srtp_status_name(s)));
  }
  return ctx;
}

}  // namespace

std::string_view srtp_status_name(int status) {
  static constexpr std::string_view kNames[] = {
      "ok",         "fail",        "bad_param",     "alloc_fail", "dealloc_fail", "init_fail",   "terminus",
      "auth_fail",  "cipher_fail", "replay_fail",   "replay_old", "algo_fail",    "no_such_op",  "no_ctx",
      "cant_check", "key_expired", "socket_err",    "signal_err", "nonce_bad",    "read_fail",   "write_fail",
      "parse_err",  "encode_err",  "semaphore_err", "pfkey_err",  "bad_mki",      "pkt_idx_old", "pkt_idx_adv"};
  if (status < 0 || static_cast<size_t>(status) >= std::size(kNames)) return "unknown";
  return kNames[status];
}

Result<void> SrtpSession::init_library() {
  if (const srtp_err_status_t s = library_status(); s != srtp_err_status_ok) {
    return Error(Errc::Config, "SRTP: srtp_init: " + std::string(srtp_status_name(s)));
  }
  return {};
}

Result<std::unique_ptr<SrtpSession>> SrtpSession::create(const SrtpKeys& keys, const SrtpOptions& options) {
  if (auto ready = init_library(); !ready) return ready.error();
  std::unique_ptr<SrtpSession> out(new SrtpSession());
  out->profile_ = keys.profile;
  // Checks the length of key and salt (both directions share keys.size) before anything reads them.
  auto outbound = SrtpSender::create(keys.profile, keys.local_key());
  if (!outbound) return std::move(outbound).error();
  out->outbound_ = std::move(*outbound);
  auto in = make_inbound_context(keys, options);
  if (!in) return std::move(in).error();
  out->inbound_ = *in;
  return out;
}

SrtpSession::~SrtpSession() {
  if (inbound_) srtp_dealloc(inbound_);
}

Result<size_t> SrtpSession::protect_rtp(std::span<uint8_t> buffer, size_t length) {
  return outbound_->protect_rtp(buffer, length);
}

Result<size_t> SrtpSession::protect_rtcp(std::span<uint8_t> buffer, size_t length) {
  return outbound_->protect_rtcp(buffer, length);
}

Result<void> SrtpSession::protect_rtp(std::vector<uint8_t>& packet) {
  const size_t length = packet.size();
  packet.resize(length + kMaxOverhead);
  auto r = protect_rtp(std::span(packet), length);
  if (!r) {
    packet.resize(length);
    return std::move(r).error();
  }
  packet.resize(*r);
  return {};
}

Result<void> SrtpSession::protect_rtcp(std::vector<uint8_t>& packet) {
  const size_t length = packet.size();
  packet.resize(length + kMaxOverhead);
  auto r = protect_rtcp(std::span(packet), length);
  if (!r) {
    packet.resize(length);
    return std::move(r).error();
  }
  packet.resize(*r);
  return {};
}

Result<void> SrtpSession::unprotect_rtp(std::span<uint8_t>& packet) {
  if (packet.size() < kMinRtp || packet.size() > INT_MAX / 2) return Error(Errc::Malformed, "SRTP: too short for RTP");
  int len = static_cast<int>(packet.size());
  const srtp_err_status_t s = srtp_unprotect(inbound_, packet.data(), &len);
  if (s != srtp_err_status_ok) return status_error("unprotect RTP", s);
  packet = packet.first(static_cast<size_t>(len));
  return {};
}

Result<void> SrtpSession::unprotect_rtcp(std::span<uint8_t>& packet) {
  if (packet.size() < kMinRtcp || packet.size() > INT_MAX / 2) {
    return Error(Errc::Malformed, "SRTCP: too short for RTCP");
  }
  int len = static_cast<int>(packet.size());
  const srtp_err_status_t s = srtp_unprotect_rtcp(inbound_, packet.data(), &len);
  if (s != srtp_err_status_ok) return status_error("unprotect RTCP", s);
  packet = packet.first(static_cast<size_t>(len));
  return {};
}

}  // namespace sluice::server
