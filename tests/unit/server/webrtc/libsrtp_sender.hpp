// libsrtp2's own sender (an outbound context with allow_repeat_tx and SrtpSender's window, as
// Sluice protected before server/webrtc/srtp_sender.hpp): the reference SrtpSender's bytes and
// refusals are checked against, by srtp_sender_test and the srtp_unprotect fuzz target.
#pragma once

#include <srtp2/srtp.h>

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "server/webrtc/srtp_sender.hpp"
#include "server/webrtc/srtp_session.hpp"

namespace sluice::test {

class LibsrtpSender {
 public:
  // key_salt: the master key then the salt, as for SrtpSender. ok() says whether libsrtp took it.
  LibsrtpSender(server::SrtpProfile profile, std::span<const uint8_t> key_salt) {
    if (!server::SrtpSession::init_library().ok()) return;
    std::vector<uint8_t> key(key_salt.begin(), key_salt.end());
    srtp_policy_t policy{};
    if (profile == server::SrtpProfile::AeadAes128Gcm) {
      srtp_crypto_policy_set_aes_gcm_128_16_auth(&policy.rtp);
      srtp_crypto_policy_set_aes_gcm_128_16_auth(&policy.rtcp);
    } else {
      srtp_crypto_policy_set_aes_cm_128_hmac_sha1_80(&policy.rtp);
      srtp_crypto_policy_set_aes_cm_128_hmac_sha1_80(&policy.rtcp);
    }
    policy.ssrc.type = ssrc_any_outbound;
    policy.key = key.data();
    policy.window_size = server::SrtpSender::kWindow;
    policy.allow_repeat_tx = 1;
    if (srtp_create(&ctx_, &policy) != srtp_err_status_ok) ctx_ = nullptr;
  }
  ~LibsrtpSender() {
    if (ctx_) srtp_dealloc(ctx_);
  }
  LibsrtpSender(const LibsrtpSender&) = delete;
  LibsrtpSender& operator=(const LibsrtpSender&) = delete;

  bool ok() const { return ctx_ != nullptr; }

  // The protected packet, or nothing when libsrtp refuses it.
  std::optional<std::vector<uint8_t>> protect(std::vector<uint8_t> p, bool rtcp) {
    const size_t plain = p.size();
    if (!ctx_ || plain > 65535) return std::nullopt;
    p.resize(plain + server::SrtpSender::kMaxOverhead);
    int len = static_cast<int>(plain);
    const auto s = rtcp ? srtp_protect_rtcp(ctx_, p.data(), &len) : srtp_protect(ctx_, p.data(), &len);
    if (s != srtp_err_status_ok) return std::nullopt;
    p.resize(static_cast<size_t>(len));
    return p;
  }

 private:
  srtp_t ctx_ = nullptr;
};

}  // namespace sluice::test
