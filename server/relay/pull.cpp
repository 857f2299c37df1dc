#include "server/relay/pull.hpp"

#include <algorithm>
#include <iterator>
#include <utility>

#include "server/io/logging.hpp"
#include "server/live/publication.hpp"
#include "server/live/stream_registry.hpp"
#include "server/live/timestamp_jump_log.hpp"
#include "server/relay/push_target.hpp"
#include "server/relay/relay_services.hpp"

namespace sluice::server {

namespace {
const char* pull_state_name(Pull::State s) {
  switch (s) {
    case Pull::State::Locating: return "locating";
    case Pull::State::Connecting: return "connecting";
    case Pull::State::Live: return "live";
    case Pull::State::Waiting: return "waiting";
    case Pull::State::Ended: return "ended";
  }
  return "?";
}
// A cluster pull asks the registry again at least this often while it has no stream: a publisher
// that comes back on another node is found within about a second (docs/cluster.md, "Faults").
constexpr uint64_t kRelocateMaxMs = 1000;
}  // namespace

Pull::Pull(RelayServices& services, Settings settings) : services_(services), settings_(std::move(settings)) {}

Pull::~Pull() { end("server stopping"); }

void Pull::start() { settings_.locate ? locate() : connect(); }

void Pull::locate() {
  set_state(State::Locating, "");
  settings_.locate(settings_.key, [alive = std::weak_ptr<char>(alive_), this](StreamLocation where) {
    if (!alive.expired()) on_located(where);
  });
}

void Pull::on_located(const StreamLocation& where) {
  if (state_ != State::Locating) return;  // ended meanwhile
  switch (where.kind) {
    case StreamLocation::Kind::Remote: {
      const std::string app = settings_.key.substr(0, settings_.key.find('/'));
      auto url = RelayUrl::parse(where.rtmp + "/" + app);
      if (!url) return wait_to_retry("node " + where.owner + " advertises an unusable address: " + where.rtmp);
      settings_.upstreams = {std::move(*url)};
      upstream_ = 0;
      return connect();
    }
    case StreamLocation::Kind::Nobody: return wait_to_retry("no node owns the stream");
    case StreamLocation::Kind::Here: return wait_to_retry("this node owns the stream");
    case StreamLocation::Kind::Unreachable: return wait_to_retry("the cluster registry is unreachable");
  }
}

void Pull::wait_to_retry(const std::string& why) {
  abandon_handover();
  last_error_ = why;
  retry_at_ms_ = services_.loop.now_ms() + std::min(backoff_.next_delay_ms(), kRelocateMaxMs);
  set_state(State::Waiting, why);
}

void Pull::connect() {
  RelayLink::Settings s;
  s.role = RelayLink::Role::Pull;
  s.url = settings_.upstreams[upstream_];
  s.stream_name = s.url.stream_name(settings_.name);
  if (!settings_.query.empty()) s.stream_name += "?" + settings_.query;
  s.tls = services_.tls(settings_.verify);
  s.setup_timeout_ms = static_cast<uint64_t>(services_.loop.config().rtmp.handshake_timeout.count());
  ++connects_;
  set_state(State::Connecting, "");
  client_ = services_.make_link(std::move(s), this);
  if (client_ == nullptr) return wait_to_retry("srt:// needs SRT, which this server was started without");
  client_->start();  // may fail at once: relay_closed has then run
}

void Pull::relay_live(RelayLink& c) {
  if (claimed_by_ == nullptr) {
    auto claim = services_.registry.claim_publisher(settings_.key, &c.link_peer(), settings_.hub);
    if (claim != StreamRegistry::Claim::Claimed) {
      // Published here meanwhile (an edge's own publisher), or the server is full.
      end(claim == StreamRegistry::Claim::Taken ? "published here by another client" : "rtmp.limits.max_streams");
      return;
    }
    claimed_by_ = &c.link_peer();
    hub_ = services_.registry.find(settings_.key);
    services_.registry.set_seat(settings_.key, claimed_by_, this);
    if (settings_.follows.takeovers != 0) services_.registry.set_takeovers(settings_.key, settings_.follows.takeovers);
  }
  live_since_ms_ = last_frame_ms_ = services_.loop.now_ms();
  failed_in_round_ = 0;
  set_state(State::Live, "");
}

namespace {
// The upstream's own "|RtmpSampleAccess" data message belongs to its play answer, not to the
// stream: local players get this server's.
bool is_sample_access(const protocol::Message& m) {
  static constexpr uint8_t kName[] = {0x02, 0x00, 0x11, '|', 'R', 't', 'm', 'p', 'S', 'a',
                                      'm',  'p',  'l',  'e', 'A', 'c', 'c', 'e', 's', 's'};
  auto p = m.payload.span();
  return m.type == protocol::msg_type::kDataAmf0 && p.size() >= sizeof kName &&
         std::equal(std::begin(kName), std::end(kName), p.begin());
}
}  // namespace

void Pull::relay_media(RelayLink&, protocol::Message& m) {
  if (!hub_ || is_sample_access(m)) return;
  last_frame_ms_ = services_.loop.now_ms();
  if (!publication_) {
    publication_.emplace(*hub_, settings_.timestamp_jump_ms, std::exchange(settings_.follows.continue_after, {}));
  }
  std::optional<media::TimestampCorrector::Jump> jump;
  ++frames_;
  publication_->publish(m.type, m.timestamp, std::move(m.payload), last_frame_ms_, jump);
  if (jump) log_timestamp_jump("relay=pull", settings_.key, *jump, jump_log_, last_frame_ms_);
}

void Pull::relay_source_end(RelayLink&) { end_publication(); }

void Pull::end_publication() { publication_.reset(); }

// The publication this pull was to continue gets no stream from it (the new owner is gone, or
// another publisher came here): it ends for the players, who were not told yet.
void Pull::abandon_handover() {
  if (!settings_.follows.continue_after) return;
  settings_.follows.continue_after.reset();
  services_.registry.end_abandoned_publication(settings_.key);
}

// The connection is done for this pull: its bytes are counted, the local publication ends and the
// name is given back.
void Pull::let_go(RelayLink& c) {
  client_ = nullptr;
  bytes_in_done_ += c.link_peer().bytes_in();
  end_publication();
  if (claimed_by_ == &c.link_peer()) {
    claimed_by_ = nullptr;
    hub_ = nullptr;
    services_.registry.release_publisher(settings_.key, &c.link_peer());
  }
}

void Pull::relay_closed(RelayLink& c, const std::string& reason) {
  last_error_ = reason;
  let_go(c);
  if (state_ == State::Ended) return;
  const uint64_t now = services_.loop.now_ms();
  if (state_ == State::Live && now - live_since_ms_ >= Backoff::kStableMs) backoff_.reset();
  if (settings_.locate) {
    // The owner went (or refused): ask who owns it now, at once after a live stream ended.
    if (state_ != State::Live) return wait_to_retry(reason);
    retry_at_ms_ = now;
    set_state(State::Waiting, reason + "; locating again");
    return;
  }
  // Origin failover: the next upstream at once; after a round where every one failed, a backoff.
  // The state is logged against the upstream that failed, before the pull moves on to the next.
  const bool was_live = state_ == State::Live;
  const size_t next = (upstream_ + 1) % settings_.upstreams.size();
  failed_in_round_ = was_live ? 1 : failed_in_round_ + 1;
  if (failed_in_round_ < settings_.upstreams.size()) {
    retry_at_ms_ = now;
    set_state(State::Waiting, reason + "; next upstream");
  } else {
    failed_in_round_ = 0;
    const uint64_t delay = backoff_.next_delay_ms();
    retry_at_ms_ = now + delay;
    set_state(State::Waiting, reason + "; retry in " + std::to_string(delay) + "ms");
  }
  upstream_ = next;
}

uint64_t Pull::quiet_ms() const {
  const uint64_t now = services_.loop.now_ms();
  return now > last_frame_ms_ ? now - last_frame_ms_ : 0;
}

std::optional<uint32_t> Pull::give_up(const std::string& why, const SessionPeer*) {
  std::optional<uint32_t> point;
  if (settings_.locate && publication_) point = publication_->end_quietly();
  end(why);
  return point;
}

bool Pull::in_use() const { return services_.registry.in_use(settings_.key); }

void Pull::on_tick(uint64_t now_ms) {
  if (state_ == State::Ended) return;
  if (client_) client_->on_tick(now_ms);
  if (state_ == State::Ended) return;
  if (settings_.on_demand) {
    if (in_use()) {
      unused_since_ms_ = 0;
    } else if (unused_since_ms_ == 0) {
      unused_since_ms_ = now_ms;
    } else if (now_ms - unused_since_ms_ >= settings_.idle_ms) {
      end("idle: no players for " + std::to_string(settings_.idle_ms) + "ms");
      return;
    }
  }
  if (state_ == State::Waiting && settings_.locate && services_.registry.is_live(settings_.key)) {
    end("published on this node");
    return;
  }
  if (state_ == State::Waiting && now_ms >= retry_at_ms_) settings_.locate ? locate() : connect();
}

void Pull::end(const std::string& why) {
  if (state_ == State::Ended) return;
  set_state(State::Ended, why);
  if (RelayLink* c = client_) {
    let_go(*c);
    c->detach(why, nullptr);
  }
  abandon_handover();  // once the name is given back
}

void Pull::set_state(State s, const std::string& why) {
  if (s == state_ && s != State::Connecting) return;
  state_ = s;
  // A cluster pull looks again every second while nobody owns the stream: said once, not each time.
  if (settings_.locate && (s == State::Locating || (s == State::Waiting && why == last_logged_))) return;
  last_logged_ = why;
  const std::string url = upstream_display();
  // A failure is a warning; the normal steps (and the end, whatever its reason) are not.
  const bool failure = !why.empty() && s != State::Ended;
  if (failure) {
    SLUICE_LOG_WARN("event=relay_pull stream={} upstream={} state={} attempt={} reason=\"{}\"", settings_.key, url,
                    pull_state_name(s), connects_, printable(why, 200));
  } else {
    SLUICE_LOG_INFO("event=relay_pull stream={} upstream={} state={} attempt={}{}", settings_.key, url,
                    pull_state_name(s), connects_,
                    why.empty() ? std::string() : " reason=\"" + printable(why, 200) + "\"");
  }
}

std::string Pull::upstream_display() const {
  if (upstream_ < settings_.upstreams.size()) return settings_.upstreams[upstream_].display();
  return "cluster";  // a cluster pull before its first location
}

nlohmann::json Pull::status() const {
  return nlohmann::json{{"stream", settings_.key},
                        {"upstream", upstream_display()},
                        {"cluster", static_cast<bool>(settings_.locate)},
                        {"state", pull_state_name(state_)},
                        {"on_demand", settings_.on_demand},
                        {"connects", connects_},
                        {"failures", backoff_.failures()},
                        {"frames", frames_},
                        {"bytes_in", bytes_in_done_ + (client_ ? client_->link_peer().bytes_in() : 0)},
                        {"last_error", last_error_}};
}

}  // namespace sluice::server
