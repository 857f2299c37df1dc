#include "protocol/webrtc/ice_lite.hpp"

#include "protocol/webrtc/stun_writer.hpp"

namespace sluice::protocol::webrtc {
namespace {

BindingOutcome ignore(std::string reason) {
  BindingOutcome out;
  out.reason = std::move(reason);
  return out;
}

BindingOutcome refuse(const StunMessage& m, uint16_t code, std::string_view phrase, std::string why,
                      std::string_view pwd) {
  BindingOutcome out;
  out.action = BindingOutcome::Action::Answer;
  out.response = build_binding_error(m, code, phrase, pwd);
  out.reason = std::to_string(code) + ": " + std::move(why);
  return out;
}

}  // namespace

std::optional<std::string_view> stun_local_ufrag(const StunMessage& message) {
  if (!message.username) return std::nullopt;
  const size_t colon = message.username->find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  return message.username->substr(0, colon);
}

BindingOutcome answer_binding_request(const StunMessage& m, const IceCredentials& credentials, const Endpoint& peer) {
  if (m.kind == StunClass::Indication) return ignore("an indication (a keepalive): nothing to answer");
  if (m.kind != StunClass::Request) return ignore("a response: an ICE-lite server sends no requests");
  if (m.method != kStunBinding) return ignore("a request of method " + std::to_string(m.method) + ", not Binding");

  // RFC 5389 10.1.2: without both USERNAME and MESSAGE-INTEGRITY, 400; with credentials that do
  // not check, 401. Neither answer carries MESSAGE-INTEGRITY: we cannot prove who we are to a
  // client whose own proof failed.
  if (!m.has_fingerprint) return refuse(m, 400, "Bad Request", "a connectivity check without FINGERPRINT", {});
  if (!m.username || !m.integrity_offset) {
    return refuse(m, 400, "Bad Request", "a Binding request without USERNAME or MESSAGE-INTEGRITY", {});
  }
  const std::string_view username = *m.username;
  const size_t colon = username.find(':');
  if (colon == std::string_view::npos || username.substr(0, colon) != credentials.local_ufrag) {
    return refuse(m, 401, "Unauthorized", "USERNAME does not start with our ufrag", {});
  }
  if (!credentials.remote_ufrag.empty() && username.substr(colon + 1) != credentials.remote_ufrag) {
    return refuse(m, 401, "Unauthorized", "USERNAME does not end with the offer's ufrag", {});
  }
  if (!stun_integrity_ok(m, credentials.local_pwd)) {
    return refuse(m, 401, "Unauthorized", "MESSAGE-INTEGRITY does not check", {});
  }
  // Authenticated from here on: answers carry our MESSAGE-INTEGRITY.
  if (m.unknown_required_count > 0) {
    return refuse(m, 420, "Unknown Attribute", "comprehension-required attributes we do not know",
                  credentials.local_pwd);
  }
  // A lite agent is always controlled (RFC 8445 6.1.1). A peer that claims to be controlled too
  // would switch roles on 487 (RFC 8445 7.3.1.1, as if our tie-breaker were the larger).
  if (m.ice_controlled && !m.ice_controlling) {
    return refuse(m, 487, "Role Conflict", "the peer is controlled too; an ICE-lite server cannot control",
                  credentials.local_pwd);
  }
  BindingOutcome out;
  out.action = BindingOutcome::Action::Answer;
  out.response = build_binding_success(m, peer, credentials.local_pwd);
  out.authenticated = true;
  out.nominated = m.use_candidate;
  out.priority = m.priority.value_or(0);
  return out;
}

}  // namespace sluice::protocol::webrtc
