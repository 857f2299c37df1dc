// cluster: { registry, node_id, advertise, password(_file|_env), token(_file|_env), lease,
// duplicate_publish } (config/cluster.hpp, docs/cluster.md). Internal to config/.
#pragma once

#include "config/cluster.hpp"
#include "config/yaml_fields.hpp"

namespace sluice::config {

// `fallback_node_id` names the node when the file does not (the host name).
void load_cluster(FieldReader& r, const Field& self, ClusterConfig& cluster, const std::string& fallback_node_id);
const char* duplicate_publish_name(DuplicatePublish d);

}  // namespace sluice::config
