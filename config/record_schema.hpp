// apps.NAME.record as a map: { mode: off|all|manual, dir, path, segment: { duration, size }, keep, mp4 }
// (the short form record: true + record_path is read by schema.cpp). Internal to config/.
#pragma once

#include "config/config.hpp"
#include "config/yaml_fields.hpp"

namespace sluice::config {

void load_record(FieldReader& r, const Field& self, AppConfig& app);

}  // namespace sluice::config
