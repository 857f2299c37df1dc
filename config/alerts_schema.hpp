// apps.NAME.alerts: { no_media, keyframe_interval, fps_below, fps_for, bitrate_below_kbps,
// bitrate_for } (config/alerts.hpp). Internal to config/.
#pragma once

#include "config/alerts.hpp"
#include "config/yaml_fields.hpp"

namespace sluice::config {

void load_app_alerts(FieldReader& r, const Field& self, StreamAlertRules& alerts);

}  // namespace sluice::config
