// apps.NAME.hls: `hls: true` (the defaults) or { enabled, variant, segment, part, window,
// on_demand, idle_close, dir }. Internal to config/.
#pragma once

#include "config/config.hpp"
#include "config/yaml_fields.hpp"

namespace YAML {
class Emitter;
}

namespace sluice::config {

void load_hls(FieldReader& r, const Field& self, AppConfig& app);
// The hls map as the dumped configuration shows it.
void emit_hls(YAML::Emitter& out, const HlsConfig& hls);

}  // namespace sluice::config
