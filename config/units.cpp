#include "config/units.hpp"

#include <cctype>
#include <limits>

namespace sluice::config {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Reads leading decimal digits into value; false on overflow. pos ends after the digits.
bool read_digits(std::string_view s, size_t& pos, uint64_t& value) {
  value = 0;
  while (pos < s.size() && is_digit(s[pos])) {
    uint64_t d = static_cast<uint64_t>(s[pos] - '0');
    if (value > (std::numeric_limits<uint64_t>::max() - d) / 10) return false;
    value = value * 10 + d;
    ++pos;
  }
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

constexpr uint64_t kMsPerSecond = 1000;
constexpr uint64_t kMsPerMinute = 60 * kMsPerSecond;
constexpr uint64_t kMsPerHour = 60 * kMsPerMinute;
constexpr uint64_t kMsPerDay = 24 * kMsPerHour;
// Ten years: retention (record.keep) is the longest duration a setting takes.
constexpr uint64_t kMaxDurationMs = 3650 * kMsPerDay;

}  // namespace

Result<uint64_t> parse_size(std::string_view text) {
  std::string_view s = trim(text);
  auto bad = [&] {
    return Error(Errc::Config,
                 "not a size: \"" + std::string(text) +
                     "\" (expected a whole number of bytes with an optional unit, e.g. 4GiB, 512KiB, 1048576)");
  };
  size_t pos = 0;
  uint64_t value = 0;
  if (s.empty() || !is_digit(s[0])) return bad();
  if (!read_digits(s, pos, value)) return Error(Errc::Config, "size too large: \"" + std::string(text) + "\"");
  std::string unit = lower(trim(s.substr(pos)));

  struct Unit {
    const char* name;
    uint64_t factor;
  };
  static constexpr Unit kUnits[] = {
      {"", 1},
      {"b", 1},
      {"kib", uint64_t{1} << 10},
      {"mib", uint64_t{1} << 20},
      {"gib", uint64_t{1} << 30},
      {"tib", uint64_t{1} << 40},
      {"kb", 1000},
      {"mb", 1000 * 1000},
      {"gb", 1000 * 1000 * 1000},
      {"tb", uint64_t{1000} * 1000 * 1000 * 1000},
  };
  for (const Unit& u : kUnits) {
    if (unit != u.name) continue;
    if (value > std::numeric_limits<uint64_t>::max() / u.factor) {
      return Error(Errc::Config, "size too large: \"" + std::string(text) + "\"");
    }
    return value * u.factor;
  }
  return Error(Errc::Config, "unknown size unit \"" + std::string(trim(s.substr(pos))) + "\" in \"" +
                                 std::string(text) + "\" (use B, KiB, MiB, GiB, TiB, KB, MB, GB or TB)");
}

Result<std::chrono::milliseconds> parse_duration(std::string_view text) {
  std::string_view s = trim(text);
  auto bad = [&] {
    return Error(Errc::Config, "not a duration: \"" + std::string(text) +
                                   "\" (expected a number with a unit: ms, s, m, h or d, e.g. 500ms, 30s, 5m, 1m30s)");
  };
  if (s == "0") return std::chrono::milliseconds(0);
  if (s.empty()) return bad();

  size_t pos = 0;
  uint64_t total = 0;
  uint64_t last_factor = std::numeric_limits<uint64_t>::max();
  while (pos < s.size()) {
    uint64_t value = 0;
    if (!is_digit(s[pos])) return bad();
    if (!read_digits(s, pos, value)) return Error(Errc::Config, "duration too long: \"" + std::string(text) + "\"");
    size_t unit_start = pos;
    while (pos < s.size() && std::isalpha(static_cast<unsigned char>(s[pos]))) ++pos;
    std::string unit = lower(s.substr(unit_start, pos - unit_start));
    uint64_t factor = 0;
    if (unit == "ms") {
      factor = 1;
    } else if (unit == "d") {
      factor = kMsPerDay;
    } else if (unit == "s") {
      factor = kMsPerSecond;
    } else if (unit == "m") {
      factor = kMsPerMinute;
    } else if (unit == "h") {
      factor = kMsPerHour;
    } else if (unit.empty()) {
      std::string n = std::to_string(value);
      return Error(Errc::Config, "duration \"" + std::string(text) + "\" needs a unit: ms, s, m, h or d (e.g. " + n +
                                     "s or " + n + "ms)");
    } else {
      return Error(Errc::Config,
                   "unknown duration unit \"" + unit + "\" in \"" + std::string(text) + "\" (use ms, s, m, h or d)");
    }
    if (factor >= last_factor) {
      return Error(Errc::Config,
                   "duration \"" + std::string(text) + "\" must list units from largest to smallest, once each");
    }
    last_factor = factor;
    if (value > kMaxDurationMs / factor || total + value * factor > kMaxDurationMs) {
      return Error(Errc::Config, "duration too long: \"" + std::string(text) + "\" (at most 3650d)");
    }
    total += value * factor;
  }
  return std::chrono::milliseconds(static_cast<int64_t>(total));
}

std::string format_size(uint64_t bytes) {
  static constexpr struct {
    const char* suffix;
    unsigned shift;
  } kUnits[] = {{"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}};
  if (bytes != 0) {
    for (const auto& u : kUnits) {
      uint64_t factor = uint64_t{1} << u.shift;
      if (bytes % factor == 0) return std::to_string(bytes / factor) + u.suffix;
    }
  }
  return std::to_string(bytes);
}

std::string format_duration(std::chrono::milliseconds duration) {
  int64_t ms = duration.count();
  if (ms <= 0) return ms == 0 ? "0s" : std::to_string(ms) + "ms";
  std::string out;
  auto part = [&](int64_t factor, const char* unit) {
    if (ms >= factor) {
      out += std::to_string(ms / factor) + unit;
      ms %= factor;
    }
  };
  part(static_cast<int64_t>(kMsPerHour), "h");
  part(static_cast<int64_t>(kMsPerMinute), "m");
  part(static_cast<int64_t>(kMsPerSecond), "s");
  if (ms > 0) out += std::to_string(ms) + "ms";
  return out;
}

}  // namespace sluice::config
