// The access log (docs/access_log.md): `access_log:` at the top. One line per finished HTTP
// request and per finished RTMP, SRT, WebRTC or HLS session, in the format nginx and Apache write
// (combined, common) or as JSON lines. Off unless a path is given.
#pragma once

#include <string>
#include <string_view>

namespace sluice::config {

enum class AccessLogFormat { Combined, Common, Json };

constexpr std::string_view access_log_format_name(AccessLogFormat f) {
  switch (f) {
    case AccessLogFormat::Common: return "common";
    case AccessLogFormat::Json: return "json";
    case AccessLogFormat::Combined: break;
  }
  return "combined";
}

struct AccessLogConfig {
  // Empty: off. "stderr": standard error. Else a file, absolute after loading (a relative path is
  // the configuration file's directory's), opened for appending.
  std::string path;
  AccessLogFormat format = AccessLogFormat::Combined;

  static constexpr std::string_view kStderr = "stderr";
  bool enabled() const { return !path.empty(); }
  bool operator==(const AccessLogConfig&) const = default;
};

}  // namespace sluice::config
