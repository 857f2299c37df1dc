// The access decision that needs no round trip: address rules, keys and signed URLs of one app's
// publish or play rules (config/access.hpp). No I/O, no clock of its own: the caller passes the
// peer's address and the time. Unit-tested in tests/unit/server/access/policy_test.cpp; what a
// user configures is in docs/security.md.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "config/access.hpp"

namespace sluice::server {

enum class AccessAction { Publish, Play };
std::string_view access_action_name(AccessAction a);  // "publish" / "play" (also the signed action)

enum class Denial { None, Address, KeyMissing, KeyWrong, Signature };

struct AccessVerdict {
  Denial denial = Denial::None;
  std::string reason;  // short and safe to show the client: "wrong key", "signed URL expired"
  bool allowed() const { return denial == Denial::None; }
};

// `query` is the request's query as received (percent-decoded here, once). A key is taken from
// key= (or token=, the wave-1 name); a signature from expires= and sign=.
AccessVerdict check_access(const config::AccessRules& rules, AccessAction action, std::string_view app,
                           std::string_view stream, std::string_view query, std::span<const uint8_t> peer,
                           int64_t now_s);

}  // namespace sluice::server
