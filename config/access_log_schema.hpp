// access_log: { path, format } (config/access_log.hpp, docs/access_log.md). Internal to config/.
#pragma once

#include "config/access_log.hpp"
#include "config/yaml_fields.hpp"

namespace YAML {
class Emitter;
}

namespace sluice::config {

void load_access_log(FieldReader& r, const Field& self, AccessLogConfig& access_log);
// The section as the dumped configuration shows it (nothing when the log is off).
void emit_access_log(YAML::Emitter& out, const AccessLogConfig& access_log);

}  // namespace sluice::config
