// StunCheck: the controlling side of ICE as a WHEP load player needs it against an ICE-lite server:
// a Binding request with USERNAME "server_ufrag:client_ufrag", PRIORITY, ICE-CONTROLLING,
// USE-CANDIDATE (aggressive nomination), MESSAGE-INTEGRITY keyed with the server's ice-pwd and
// FINGERPRINT (protocol/webrtc/stun_writer), and the check of its answer (parse_stun, the same
// transaction, MESSAGE-INTEGRITY with the same key). The same requests keep consent (RFC 7675).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "protocol/webrtc/stun.hpp"

namespace sluice::bench {

class StunCheck {
 public:
  StunCheck() = default;
  StunCheck(std::string username, std::string server_pwd, uint64_t tie_breaker);

  // A new request (a new transaction id); only the latest one's answer is taken.
  std::vector<uint8_t> request();

  enum class Answer : uint8_t {
    NotOurs,  // not STUN, not a response, another transaction (an earlier request's late answer)
    Success,  // the success response to the latest request, integrity checked
    Refused,  // an error response, or a success whose integrity does not check
  };
  Answer on_datagram(std::span<const uint8_t> datagram);

 private:
  std::string username_;
  std::string pwd_;
  uint64_t tie_breaker_ = 0;
  protocol::webrtc::StunTransactionId transaction_{};
  bool pending_ = false;
};

}  // namespace sluice::bench
