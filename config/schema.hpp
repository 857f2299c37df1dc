// The schema of the configuration file: its sections and keys, into the typed structs of
// config.hpp. Internal to config/; load.hpp is the public entry point.
#pragma once

#include "config/config.hpp"
#include "config/yaml_document.hpp"
#include "config/yaml_fields.hpp"

namespace sluice::config {

// The Config the document `root` describes. Every problem is recorded in `reader` (the caller
// looks at reader.errors()); the Config is only meaningful when there is none.
Config read_config(FieldReader& reader, const YamlNode& root);

}  // namespace sluice::config
