// The access keys of the file (config/access.hpp): apps.NAME.publish / play / limits, hooks,
// limits, http.api.token. Internal to config/; schema.cpp calls these for their sections.
#pragma once

#include "config/config.hpp"
#include "config/yaml_fields.hpp"

namespace sluice::config {

// apps.NAME.publish or apps.NAME.play.
void load_access_rules(FieldReader& r, const Field& self, AccessRules& rules);
void load_app_limits(FieldReader& r, const Field& self, AppLimits& limits);
void load_hooks(FieldReader& r, const Field& self, HooksConfig& hooks);
// Top-level limits: connections (rtmp.max_connections) and per_ip.
void load_connection_limits(FieldReader& r, const Field& self, Config& cfg);
// A secret spelled KEY (inline), KEY_file (a file holding it) or KEY_env (an environment
// variable), at most one of the three; nothing is changed when none is present.
void load_secret(FieldReader& r, const Section& s, const Field& self, std::string_view key, Secret& out);

}  // namespace sluice::config
