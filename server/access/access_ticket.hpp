// AccessTicket: what an admitted publisher or player holds for as long as it exists: its seat in
// the app's limits and, when it ends, the publish_done / play_done hook (duration and the
// connection's byte counts at that moment), and the session's line in the access log
// (server/access_log/). Held by LivePublisher, LivePlayer, VodPlayer and the HTTP responders;
// destroying it is ending the session, however that happens.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "server/access/audience.hpp"
#include "server/access/gate.hpp"
#include "server/access/hook_messages.hpp"
#include "server/io/loop_context.hpp"
#include "server/io/session_peer.hpp"

namespace sluice::server {

class AccessTicket {
 public:
  AccessTicket() = default;
  // `peer` and `loop` outlive the ticket (the ticket is held by something the connection owns).
  // Such a ticket is enrolled in its gate, for reload.recheck.
  AccessTicket(AccessGate& gate, AccessAction action, HookEvent event, Seat seat, SessionPeer& peer,
               const LoopContext& loop)
      : gate_(&gate),
        action_(action),
        event_(std::move(event)),
        seat_(std::move(seat)),
        peer_(&peer),
        loop_(&loop),
        started_ms_(loop.now_ms()),
        admitted_unix_s_(unix_now()) {
    gate_->enroll(this);
  }
  // A session that spans connections (an HLS viewer): no byte counts; end() needs its now_ms.
  AccessTicket(AccessGate& gate, AccessAction action, HookEvent event, Seat seat, uint64_t now_ms)
      : gate_(&gate), action_(action), event_(std::move(event)), seat_(std::move(seat)), started_ms_(now_ms) {}
  AccessTicket(AccessTicket&& o) noexcept { take(o); }
  AccessTicket& operator=(AccessTicket&& o) noexcept {
    if (this != &o) {
      end();
      take(o);
    }
    return *this;
  }
  ~AccessTicket() { end(); }

  // Why the session ends, for the done hook ("unpublish", "closed: idle timeout", ...).
  void set_end_reason(std::string reason) { reason_ = std::move(reason); }
  // Bytes sent to a session without a connection of its own (an HLS viewer), for the access log.
  void add_bytes_out(uint64_t n) { counted_bytes_out_ += n; }
  // Sends the done hook now (once) and gives back the seat.
  void end(uint64_t now_ms = 0);
  // reload.recheck (ticket_recheck.cpp): whether `config`'s rules would have admitted this session
  // when it was admitted (at that time: a signed URL that expired since is still good); if not,
  // its session ends. Hooks and limits are not asked again.
  bool recheck(const config::Config& config);

 private:
  AccessGate* gate_ = nullptr;
  AccessAction action_ = AccessAction::Play;
  HookEvent event_;
  Seat seat_;
  void take(AccessTicket& o) noexcept;

  SessionPeer* peer_ = nullptr;
  const LoopContext* loop_ = nullptr;
  uint64_t started_ms_ = 0;
  int64_t admitted_unix_s_ = 0;
  std::string reason_;
  uint64_t counted_bytes_out_ = 0;
};

// The access log's line of a publish or play refused at its admission, which has no ticket:
// "refused: <reason>", its status a 403 unless the reason says 404 or 429 (docs/access_log.md).
void write_refused_access_line(AccessAction action, const HookEvent& event, const SessionPeer& peer,
                               const std::string& reason);

}  // namespace sluice::server
