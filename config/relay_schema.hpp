// apps.NAME.push, apps.NAME.pull and the origins of type: edge (config/relay.hpp). Internal to config/.
#pragma once

#include <string_view>

#include "config/config.hpp"
#include "config/yaml_fields.hpp"

namespace sluice::config {

void load_push(FieldReader& r, const Field& self, RelayConfig& relay);
void load_pull(FieldReader& r, const Field& self, RelayConfig& relay);
void load_edge_origins(FieldReader& r, const Field& self, RelayConfig& relay);

}  // namespace sluice::config
