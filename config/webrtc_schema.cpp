#include "config/webrtc_schema.hpp"

#include <string>

namespace sluice::config {

void load_webrtc(FieldReader& r, const Field& self, WebrtcConfig& webrtc) {
  Section s(r, self, {"listen", "advertise", "session_timeout", "max_sessions", "publish_bitrate"});
  if (!s.valid()) return;
  if (auto f = s.take("listen")) {
    if (r.read_listen(*f, webrtc.listen) && webrtc.listen.size() > 1) {
      r.error(*f, "takes one UDP address (the first loop's port; the other loops take the ports after it)");
    }
  }
  if (auto f = s.take("advertise")) {
    if (r.read_string_list(*f, webrtc.advertise)) {
      for (const std::string& a : webrtc.advertise) {
        // An address literal: a candidate with a host name would need mDNS or DNS at the browser.
        auto parsed = parse_cidr(a);
        if (!parsed || a.find('/') != std::string::npos) {
          r.error(*f, "\"" + a + "\" is not an IPv4 or IPv6 address (the address browsers send media to)");
        }
      }
    }
  }
  if (auto f = s.take("session_timeout")) {
    r.read_duration(*f, webrtc.session_timeout, std::chrono::seconds(5), std::chrono::seconds(600), false);
  }
  if (auto f = s.take("max_sessions")) r.read_uint(*f, webrtc.max_sessions, 1, 1'000'000);
  if (auto f = s.take("publish_bitrate")) r.read_uint(*f, webrtc.publish_bitrate, 100'000, 1'000'000'000);
}

}  // namespace sluice::config
