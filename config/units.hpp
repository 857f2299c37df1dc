// Human-readable sizes ("4GiB", "512KiB", "1048576") and durations ("30s", "500ms", "1m30s"),
// parsed for the loader and formatted back for to_yaml. The messages say what was expected,
// without a location: the loader prefixes file:line:col and the key.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/result.hpp"

namespace sluice::config {

// A whole number of bytes, optionally followed by a unit (spaces allowed before it, case ignored):
// B; KiB MiB GiB TiB (powers of 1024); KB MB GB TB (powers of 1000). Overflow is an error.
Result<uint64_t> parse_size(std::string_view text);

// One or more <integer><unit> groups, largest unit first: "500ms", "30s", "5m", "1h", "1m30s".
// Units: ms, s, m, h. A bare "0" is accepted (zero needs no unit); any other bare number is an
// error, because "30" could mean seconds or milliseconds. Limited to 1000 hours.
Result<std::chrono::milliseconds> parse_duration(std::string_view text);

// The shortest exact spelling: 4294967296 -> "4GiB", 1000 -> "1000", 1536 -> "1536".
std::string format_size(uint64_t bytes);

// The shortest exact spelling: 90000ms -> "1m30s", 500ms -> "500ms", 0 -> "0s".
std::string format_duration(std::chrono::milliseconds duration);

}  // namespace sluice::config
