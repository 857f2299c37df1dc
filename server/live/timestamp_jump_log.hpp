// The log line and counter of a source clock's jump that a publication closed up
// (media/timestamp_corrector.hpp; docs/live.md, "Timestamps"), for every kind of publisher: a
// client's publish and a relay's pull log it alike, rate limited per publisher.
#pragma once

#include <cstdint>
#include <string_view>

#include "media/timestamp_corrector.hpp"
#include "server/io/guard_counters.hpp"

namespace sluice::server {

// `who` names the publisher in the line's first field: "conn=12", "relay=pull".
void log_timestamp_jump(std::string_view who, std::string_view key, const media::TimestampCorrector::Jump& j,
                        LogRateLimit& limit, uint64_t now_ms);

}  // namespace sluice::server
