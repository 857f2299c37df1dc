// Signed URLs: "?expires=UNIX&sign=HEX" admits one action on one stream of one app until a time,
// with no round trip to anyone. sign is the lower-case hex HMAC-SHA256, keyed with the app's
// secret, of the four lines
//   <action>\n<app>\n<stream>\n<expires>
// (action "publish" or "play", no trailing newline). docs/security.md shows how to compute it
// with openssl; `sluice sign` prints such URLs. Unit-tested against openssl's output in
// tests/unit/server/access/signature_test.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace sluice::server {

// The sign= value for these four parts.
std::string url_signature(std::string_view secret, std::string_view action, std::string_view app,
                          std::string_view stream, int64_t expires);

enum class SignatureCheck { Valid, Missing, Malformed, Expired, Wrong };
std::string_view signature_check_text(SignatureCheck c);  // for logs and client replies

// Reads expires= and sign= from the (undecoded) query and checks them at now_s, tolerating
// skew_s seconds of clock difference past the expiry. The comparison is constant-time.
SignatureCheck check_url_signature(std::string_view secret, std::string_view action, std::string_view app,
                                   std::string_view stream, std::string_view query, int64_t now_s, int64_t skew_s);

}  // namespace sluice::server
