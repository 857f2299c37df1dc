// URL query strings as access checks read them, one parser for every front door (RTMP's
// publish/play names carry "?key=...", HTTP requests their query). No I/O: unit-tested in
// tests/unit/server/access/query_test.cpp.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/percent_decode.hpp"

namespace sluice::server {

using sluice::percent_decode;  // base/percent_decode.hpp: %XX escapes (not '+')

// The value of `key` in an application/x-www-form-urlencoded query ("a=1&token=x"), '+' as a
// space and percent-decoded once; "" for a key without '='; nullopt when absent or malformed.
// The first occurrence wins.
std::optional<std::string> query_param(std::string_view query, std::string_view key);

// Every key=value pair, decoded like query_param; malformed pairs are skipped. At most
// max_pairs pairs (what a hook is told of a client's query).
std::vector<std::pair<std::string, std::string>> query_pairs(std::string_view query, size_t max_pairs = 64);

}  // namespace sluice::server
