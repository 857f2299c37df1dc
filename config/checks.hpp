// Checks across fields: rules that tie one setting to another. The schema (schema.cpp) calls each
// one as soon as the settings it compares have been read without error, so a problem is reported
// once, on the key the user most likely has to change. Internal to config/.
#pragma once

#include <optional>

#include "config/config.hpp"
#include "config/yaml_fields.hpp"

namespace sluice::config {

// rtmp.ping_interval must be shorter than rtmp.idle_timeout unless either is 0 (off). At least one
// of the two fields is present.
void check_ping_interval(FieldReader& reader, const std::optional<Field>& idle, const std::optional<Field>& ping,
                         const RtmpConfig& rtmp);

// rtmp.player_queue: each soft limit at most its hard limit.
void check_queue_limits(FieldReader& reader, const std::optional<Field>& soft_bytes,
                        const std::optional<Field>& hard_bytes, const std::optional<Field>& soft_delay,
                        const std::optional<Field>& hard_delay, const PlayerQueueConfig& queue);

// A live app with record: true needs a record_path.
void check_record_path(FieldReader& reader, const std::optional<Field>& record, const AppConfig& app);

// No two listeners (rtmp.listen, and http.listen when HTTP is on) that cannot both bind.
void check_listeners(FieldReader& reader, const Config& cfg);

}  // namespace sluice::config
