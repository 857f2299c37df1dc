// `sluice sign`: prints a signed URL (server/access/signature.hpp) for one app, stream and action,
// with the secret of the configuration the server runs with. docs/security.md shows it in use.
#pragma once

#include <cstdint>
#include <string>

namespace sluice::server {

struct SignOptions {
  std::string config_path;  // empty: the embedded default
  std::string app;
  std::string stream;
  std::string action = "play";  // or publish
  std::string ttl = "1h";       // a duration as the configuration spells them
  std::string url;              // the URL to sign (query appended); empty: rtmp://127.0.0.1:<port>/app/stream
  int64_t now_s = 0;            // 0: the clock
};

// 0 and the URL on stdout, or 2 and the reason on stderr.
int run_sign_command(const SignOptions& options);

}  // namespace sluice::server
