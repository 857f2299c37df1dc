// Shared-secret checks: one place that compares what a client presents with what the
// configuration holds, for RTMP publish (apps.NAME.publish_token) and HTTP upload
// (http.upload.token). docs/security.md grows from here (keys, signed URLs, hooks).
#pragma once

#include <string>
#include <string_view>

namespace sluice::server {

// Compares in time that depends on the lengths only, never on where the first difference is, so
// that a client cannot find a secret byte by byte by timing the answers.
bool token_equal(std::string_view presented, std::string_view expected);

// Whether the query carries `name=` with exactly `expected` (percent-decoded once, compared in
// constant time). An empty expected token means no token is required: always true.
bool query_token_matches(std::string_view query, std::string_view name, std::string_view expected);

// The token of an "Authorization: Bearer <token>" value (scheme case-insensitive), else empty.
std::string bearer_token(const std::string* authorization);

}  // namespace sluice::server
