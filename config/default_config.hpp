// The configuration Sluice uses when started without a file, as YAML text. It is also what
// `sluice --print-default-config` prints, so it doubles as a commented starting point.
#pragma once

#include <string_view>

namespace sluice::config {

// What Config::source says for the embedded default.
inline constexpr std::string_view kEmbeddedSourceName = "<embedded default>";

// The YAML text of the embedded default. load_default() parses it with the current directory as
// the base for relative paths.
std::string_view default_config_yaml();

}  // namespace sluice::config
