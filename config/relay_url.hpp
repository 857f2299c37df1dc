// RelayUrl: an rtmp://, rtmps:// or srt:// URL of a relay target or upstream, split into what the
// client needs. RTMP: where to connect, the app for connect (and its tcUrl), and the stream name
// part: the first path segment is the app (as FFmpeg and OBS read such URLs); the rest, if any, is
// the stream name, "{stream}" standing for the local stream's name.
// SRT: srt://host:port?streamid=...[&passphrase=...][&latency=MS][&pbkeylen=N], the query as
// libsrt's own tools read it (latency in milliseconds); the stream id (percent-decoded, "{stream}"
// standing for the local stream's name) says what to publish or read there.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sluice::config {

struct RelayUrl {
  bool tls = false;
  std::string host;  // without brackets for IPv6
  uint16_t port = 1935;
  std::string app;
  std::string tc_url;  // rtmp[s]://host[:port]/app
  std::string name;    // may be empty
  // srt:// only.
  bool srt = false;
  std::string stream_id;  // percent-decoded
  std::string passphrase;
  uint32_t latency_ms = 0;  // 0: the server's srt.latency
  uint32_t pbkeylen = 0;    // 0: libsrt's default

  // nullopt when the URL is not rtmp[s]://host[:port]/app[/name]: no user info, a port 1..65535
  // when one is given, an IPv6 host only in brackets. relay_url_problem() (config/relay.hpp) says
  // why, with the same rules, so a loaded config never fails here.
  static std::optional<RelayUrl> parse(std::string_view url);

  // The name to publish or play: the key when given (a platform's stream key), else the URL's
  // name with {stream} replaced, else the local stream's name.
  std::string stream_name(std::string_view local_name, std::string_view key = {}) const;
  // For logs and the API: the URL without the name part (which may be a key) or the query.
  std::string display() const { return tc_url; }
};

}  // namespace sluice::config
