// webrtc: { listen, advertise, session_timeout, max_sessions, publish_bitrate } (config/webrtc.hpp, docs/webrtc.md).
// Internal to config/.
#pragma once

#include "config/webrtc.hpp"
#include "config/yaml_fields.hpp"

namespace sluice::config {

void load_webrtc(FieldReader& r, const Field& self, WebrtcConfig& webrtc);

}  // namespace sluice::config
