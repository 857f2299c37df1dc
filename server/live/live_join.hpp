// What every front door checks before a live player subscribes (an RTMP play, an HTTP-FLV request,
// an SRT reader; WHEP next), so that each only says the refusal in its own protocol: the name is
// valid, the stream is live, or a pull brings it, or the app waits for its publisher; and the hub,
// unless the server holds rtmp.limits.max_streams already. Refusals are counted (GuardCounters).
// Two steps, because an RTMP play that replaces a player of the same stream id ends that player
// between them (its hub must not be the one it leaves behind).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "config/config.hpp"
#include "media/stream_hub.hpp"

namespace sluice::server {

class StreamRegistry;

struct LiveJoin {
  enum class Outcome : uint8_t { Ok, BadName, NotLive };
  Outcome outcome = Outcome::Ok;
  std::string_view name_problem;  // BadName: what is wrong with it
  std::string key;                // "app/name"
  const char* state = "";         // the play log line's live=: "yes", "pulling" or "waiting"
  bool live() const { return state[0] == 'y' || state[0] == 'p'; }
};

LiveJoin check_live_join(StreamRegistry& registry, const config::AppConfig& app, const std::string& name);
// The hub to subscribe to; nullptr at rtmp.limits.max_streams.
media::StreamHub* live_join_hub(StreamRegistry& registry, const config::AppConfig& app, const std::string& key);

}  // namespace sluice::server
