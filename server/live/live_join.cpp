#include "server/live/live_join.hpp"

#include "server/io/guard_counters.hpp"
#include "server/live/stream_registry.hpp"

namespace sluice::server {

LiveJoin check_live_join(StreamRegistry& registry, const config::AppConfig& app, const std::string& name) {
  LiveJoin j;
  j.name_problem = stream_name_problem(name);
  if (!j.name_problem.empty()) {
    GuardCounters::bump(GuardEvent::BadStreamName);
    j.outcome = LiveJoin::Outcome::BadName;
    return j;
  }
  j.key = app.name + "/" + name;
  if (registry.is_live(j.key)) {
    j.state = "yes";
  } else if (registry.ask_upstream(app, name)) {
    j.state = "pulling";  // on its way
  } else if (app.wait_for_publisher) {
    j.state = "waiting";
  } else {
    j.outcome = LiveJoin::Outcome::NotLive;
  }
  return j;
}

media::StreamHub* live_join_hub(StreamRegistry& registry, const config::AppConfig& app, const std::string& key) {
  media::StreamHub* hub = registry.get_or_create(key, hub_options(app));
  if (hub == nullptr) GuardCounters::bump(GuardEvent::StreamsTotal);
  return hub;
}

}  // namespace sluice::server
