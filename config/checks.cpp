#include "config/checks.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "config/units.hpp"

namespace sluice::config {

void check_ping_interval(FieldReader& reader, const std::optional<Field>& idle, const std::optional<Field>& ping,
                         const RtmpConfig& rtmp) {
  if (rtmp.ping_interval.count() != 0 && rtmp.idle_timeout.count() != 0 && rtmp.ping_interval >= rtmp.idle_timeout) {
    reader.error(ping ? *ping : *idle, "ping_interval (" + format_duration(rtmp.ping_interval) +
                                           ") must be shorter than idle_timeout (" +
                                           format_duration(rtmp.idle_timeout) +
                                           "), or a quiet but healthy player is closed before it is pinged");
  }
}

void check_queue_limits(FieldReader& reader, const std::optional<Field>& soft_bytes,
                        const std::optional<Field>& hard_bytes, const std::optional<Field>& soft_delay,
                        const std::optional<Field>& hard_delay, const PlayerQueueConfig& queue) {
  // The defaults satisfy both rules, so a violation always involves a field the file gave.
  if (queue.soft_bytes > queue.hard_bytes) {
    reader.error(soft_bytes ? *soft_bytes : *hard_bytes, "soft_bytes (" + format_size(queue.soft_bytes) +
                                                             ") must not exceed hard_bytes (" +
                                                             format_size(queue.hard_bytes) + ")");
  }
  if (queue.soft_delay > queue.hard_delay) {
    reader.error(soft_delay ? *soft_delay : *hard_delay, "soft_delay (" + format_duration(queue.soft_delay) +
                                                             ") must not exceed hard_delay (" +
                                                             format_duration(queue.hard_delay) + ")");
  }
}

void check_record_path(FieldReader& reader, const std::optional<Field>& record, const AppConfig& app) {
  // record defaults to false, so record: true was spelled out.
  if (app.record.enabled() && app.record.dir.empty()) {
    reader.error(*record, record->value.is_map() ? "record needs dir (the directory for the recordings)"
                                                 : "record: true needs record_path (the directory for the recordings)");
  }
}

// Two listeners that cannot both bind: the same port and family, and the same address or a
// wildcard (0.0.0.0, ::) on either side. Port 0 (kernel-chosen) never conflicts. IPv4 against IPv6
// is not flagged: the server is expected to bind IPv6 addresses IPv6-only (UV_TCP_IPV6ONLY), so
// 0.0.0.0:1935 and [::]:1935 coexist.
void check_listeners(FieldReader& reader, const Config& cfg) {
  struct Entry {
    ListenAddress address;
    const char* section;
  };
  const std::vector<ListenSite>& sites = reader.listen_sites();
  std::vector<Entry> all;
  for (const auto& a : cfg.rtmp.listen) all.push_back({a, "rtmp.listen"});
  for (const auto& a : cfg.rtmps.listen) all.push_back({a, "rtmps.listen"});
  if (cfg.http.enabled) {
    for (const auto& a : cfg.http.listen) all.push_back({a, "http.listen"});
    for (const auto& a : cfg.https.listen) all.push_back({a, "https.listen"});
  }
  auto wildcard = [](const ListenAddress& a) { return a.host == "0.0.0.0" || a.host == "::"; };
  for (size_t j = 0; j < all.size(); ++j) {
    for (size_t i = 0; i < j; ++i) {
      const ListenAddress& a = all[i].address;
      const ListenAddress& b = all[j].address;
      if (a.port == 0 || a.port != b.port || a.is_ipv6() != b.is_ipv6()) continue;
      if (!(a == b) && !wildcard(a) && !wildcard(b)) continue;
      // Place the message on the later address if the file spelled it out, else on the earlier.
      auto find_site = [&](const ListenAddress& x, const char* section) {
        return std::find_if(sites.rbegin(), sites.rend(), [&](const ListenSite& site) {
          return site.address == x && site.path.rfind(section, 0) == 0;
        });
      };
      auto site = find_site(b, all[j].section);
      if (site == sites.rend()) site = find_site(a, all[i].section);
      YamlMark mark = site != sites.rend() ? site->mark : YamlMark{};
      std::string path = site != sites.rend() ? site->path : std::string(all[j].section);
      reader.error(mark, path,
                   b.to_string() + " (" + all[j].section + ") overlaps " + a.to_string() + " (" + all[i].section +
                       "): both cannot listen on port " + std::to_string(a.port));
    }
  }
}

}  // namespace sluice::config
