// What a reload would change (docs/configuration.md, "Reload"): the settings that differ between
// the configuration in force and a newly loaded one, and those among them a running server cannot
// take without a restart. A reload with any of the latter is refused whole, never half applied.
#pragma once

#include <string>
#include <vector>

#include "config/config.hpp"

namespace sluice::config {

struct ReloadDiff {
  // One entry per setting that differs, e.g. "apps.news: added", "log.level: info -> debug",
  // "apps.live: changed (hls, publish)"; empty when the two configurations are equal.
  std::vector<std::string> changes;
  // One entry per difference that needs a restart, with the reason, e.g. "workers: 2 -> 4 (the
  // number of event loops is fixed at start)".
  std::vector<std::string> needs_restart;

  bool unchanged() const { return changes.empty(); }
  bool applicable() const { return needs_restart.empty(); }
};

ReloadDiff diff_for_reload(const Config& now, const Config& next);

}  // namespace sluice::config
