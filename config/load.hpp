// Loading a Config from YAML, and printing one back. The YAML library stays inside config/*.cpp.
//
// Rules (docs/configuration.md says the same for users):
//  1. Nothing throws: every problem is an Error{Errc::Config, ...} whose context is one line per
//     problem, each "<file>:<line>:<column>: <key.path>: <what is wrong>" (line and column 1-based).
//     All problems found are reported at once, not only the first.
//  2. Unknown keys, wrong types, out-of-range values and YAML syntax errors are all errors.
//  3. A key that is absent takes the struct default from config.hpp.
//  4. Relative paths (vod root, record_path) become absolute against base_dir: the directory of the
//     file for load_file, the current directory for load_default.
#pragma once

#include <string>
#include <string_view>

#include "config/config.hpp"
#include "base/result.hpp"

namespace sluice::config {

// Reads and validates a YAML file. Config::source is `path` as given.
Result<Config> load_file(const std::string& path);

// Validates YAML text. source_name is used in messages and as Config::source; base_dir (made
// absolute against the current directory if relative, the current directory if empty) resolves
// relative paths.
Result<Config> load_string(std::string_view yaml, const std::string& source_name, const std::string& base_dir);

// The embedded default (default_config.hpp), relative paths against the current directory.
Result<Config> load_default();

// Whether to_yaml prints publish_token / upload.token (Show) or "<redacted>" (Redact, for logs).
enum class Secrets { Redact, Show };

// The effective configuration as YAML, every key spelled out. With Secrets::Show, load_string of
// the output gives back an equal Config (apart from source and base_dir).
std::string to_yaml(const Config& config, Secrets secrets = Secrets::Redact);

}  // namespace sluice::config
