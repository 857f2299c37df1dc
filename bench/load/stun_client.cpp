#include "bench/load/stun_client.hpp"

#include <openssl/rand.h>

#include <utility>

#include "protocol/webrtc/stun_writer.hpp"

namespace sluice::bench {

namespace pw = protocol::webrtc;

namespace {
// RFC 8445 5.1.2.1 for a host candidate of component 1 (type preference 126, as Chromium's).
constexpr uint32_t kPriority = (126u << 24) | (65535u << 8) | 255u;
}  // namespace

StunCheck::StunCheck(std::string username, std::string server_pwd, uint64_t tie_breaker)
    : username_(std::move(username)), pwd_(std::move(server_pwd)), tie_breaker_(tie_breaker) {}

std::vector<uint8_t> StunCheck::request() {
  RAND_bytes(transaction_.data(), static_cast<int>(transaction_.size()));
  pending_ = true;
  pw::StunWriter w(pw::kStunBinding, pw::StunClass::Request, transaction_);
  w.add_string(pw::stun_attribute::kUsername, username_);
  w.add_u32(pw::stun_attribute::kPriority, kPriority);
  w.add_u64(pw::stun_attribute::kIceControlling, tie_breaker_);
  w.add_flag(pw::stun_attribute::kUseCandidate);
  return std::move(w).finish(pwd_, true);
}

StunCheck::Answer StunCheck::on_datagram(std::span<const uint8_t> datagram) {
  auto m = pw::parse_stun(datagram);
  if (!m || m->method != pw::kStunBinding || !pending_ || m->transaction_id != transaction_) return Answer::NotOurs;
  if (m->kind != pw::StunClass::SuccessResponse && m->kind != pw::StunClass::ErrorResponse) return Answer::NotOurs;
  pending_ = false;
  if (m->kind == pw::StunClass::ErrorResponse || !pw::stun_integrity_ok(*m, pwd_)) return Answer::Refused;
  return Answer::Success;
}

}  // namespace sluice::bench
