// What the config tests share: loading a YAML text as sluice.yaml and reading its error message.
#pragma once

#include <doctest/doctest.h>

#include <string>
#include <string_view>

#include "config/config.hpp"
#include "config/load.hpp"

namespace sluice::config::test {

inline Result<Config> load(std::string_view yaml, const std::string& base = "/srv/sluice") {
  return load_string(yaml, "sluice.yaml", base);
}

// The whole error text, for CHECKs on messages.
inline std::string error_of(std::string_view yaml) {
  auto r = load(yaml);
  if (r.ok()) return "<loaded without error>";
  CHECK(r.error().code == Errc::Config);
  return r.error().context;
}

inline bool contains(const std::string& haystack, std::string_view needle) {
  return haystack.find(needle) != std::string::npos;
}

}  // namespace sluice::config::test
