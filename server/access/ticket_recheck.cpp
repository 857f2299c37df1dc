// reload.recheck (docs/configuration.md, "Reload"): after a reload, the sessions admitted under the
// old rules are asked again whether the new ones admit them; those that fail end, with the reason.
#include <arpa/inet.h>

#include <array>
#include <vector>

#include "server/access/access_ticket.hpp"
#include "server/access/policy.hpp"
#include "server/access_log/access_record.hpp"
#include "server/io/logging.hpp"

namespace sluice::server {

namespace {

// The address rules read the peer's address as 4 or 16 bytes; the connection names it as text.
std::vector<uint8_t> address_bytes(const std::string& text) {
  std::array<uint8_t, 16> raw{};
  if (inet_pton(AF_INET, text.c_str(), raw.data()) == 1) return {raw.begin(), raw.begin() + 4};
  if (inet_pton(AF_INET6, text.c_str(), raw.data()) == 1) return {raw.begin(), raw.end()};
  return {};
}

}  // namespace

bool AccessTicket::recheck(const config::Config& config) {
  if (gate_ == nullptr || peer_ == nullptr) return true;
  const config::AppConfig* app = config.find_app(event_.app);
  std::string why;
  if (app == nullptr) {
    why = "its app was removed";
  } else {
    const config::AccessRules& rules = action_ == AccessAction::Publish ? app->publish : app->play;
    AccessVerdict v = check_access(rules, action_, app->name, event_.stream, event_.query,
                                   address_bytes(access_client(peer_->peer())), admitted_unix_s_);
    if (v.allowed()) return true;
    why = v.reason;
  }
  const std::string reason = "access rules changed by a reload: " + why;
  SLUICE_LOG_WARN("conn={} event=access_recheck_failed action={} app={} stream={} reason=\"{}\"", event_.client_id,
                  access_action_name(action_), event_.app, printable(event_.stream), why);
  set_end_reason(reason);
  peer_->end_session(reason);
  return false;
}

size_t AccessGate::recheck() {
  size_t ended = 0;
  // A copy: a session's end may withdraw tickets (it closes after this call, but be safe).
  const std::vector<AccessTicket*> tickets(enrolled_.begin(), enrolled_.end());
  for (AccessTicket* t : tickets) {
    if (enrolled_.count(t) && !t->recheck(config())) ++ended;
  }
  return ended;
}

}  // namespace sluice::server
