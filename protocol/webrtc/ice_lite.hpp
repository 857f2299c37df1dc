// What an ICE-lite server (RFC 8445 2.5) does with a STUN message that reached its UDP port: answer
// a Binding request whose credentials check, refuse one whose do not, and ignore everything else
// (indications such as keepalives, responses: a lite agent sends no requests). The server only
// sends what this returns; docs/webrtc-protocol.md ("ICE-lite") says why each case is answered so.
//
// Use:
//  1. parse_stun() the datagram; on error drop it (and count it).
//  2. stun_local_ufrag() names the session: USERNAME is "OURS:THEIRS" in a request sent to us.
//  3. answer_binding_request() with that session's credentials and the datagram's source address;
//     send `response` when it is not empty, back to that address. `authenticated` says the request
//     proved it knows our ice-pwd: only then may the address become the session's peer, and
//     `nominated` (USE-CANDIDATE) says the controlling side chose it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/proxy_header.hpp"
#include "protocol/webrtc/stun.hpp"

namespace sluice::protocol::webrtc {

struct IceCredentials {
  std::string_view local_ufrag;
  std::string_view local_pwd;
  // The offer's ice-ufrag; empty: not checked.
  std::string_view remote_ufrag;
};

struct BindingOutcome {
  enum class Action : uint8_t { Ignore, Answer };
  Action action = Action::Ignore;
  std::vector<uint8_t> response;  // a success or an error response when Answer
  bool authenticated = false;     // a success was built: the request carried our ice-pwd
  bool nominated = false;         // authenticated and USE-CANDIDATE
  uint32_t priority = 0;
  // Why it was ignored or refused, for the server's log ("401: MESSAGE-INTEGRITY does not check").
  std::string reason;
};

// The part of USERNAME before the first ':' (our ufrag), when the request has one.
std::optional<std::string_view> stun_local_ufrag(const StunMessage& message);

BindingOutcome answer_binding_request(const StunMessage& message, const IceCredentials& credentials,
                                      const Endpoint& peer);

}  // namespace sluice::protocol::webrtc
