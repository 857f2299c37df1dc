#include "server/relay/push_target.hpp"

#include "server/io/logging.hpp"
#include "server/relay/relay_services.hpp"

namespace sluice::server {

const char* relay_state_name(PushTarget::State s) {
  switch (s) {
    case PushTarget::State::Connecting: return "connecting";
    case PushTarget::State::Live: return "live";
    case PushTarget::State::Waiting: return "waiting";
    case PushTarget::State::Stopped: return "stopped";
  }
  return "?";
}

PushTarget::PushTarget(RelayServices& services, std::string target_id, std::vector<RelayUrl> urls,
                       std::string publish_name, bool name_is_key, bool verify, std::string source_key,
                       media::StreamHub& hub)
    : services_(services),
      target_id_(std::move(target_id)),
      urls_(std::move(urls)),
      publish_name_(std::move(publish_name)),
      name_is_key_(name_is_key),
      verify_(verify),
      source_key_(std::move(source_key)),
      hub_(hub) {
  services_.registry.hold(source_key_);  // the hub stays while this target may join it
}

PushTarget::~PushTarget() {
  stop("target removed");
  services_.registry.release(source_key_);
}

void PushTarget::start() { connect(); }

void PushTarget::connect() {
  RelayLink::Settings s;
  s.role = RelayLink::Role::Push;
  s.url = urls_[at_];
  s.stream_name = publish_name_;
  s.tls = services_.tls(verify_);
  s.registry = &services_.registry;
  s.source_key = source_key_;
  s.hub = &hub_;
  s.queue = services_.loop.config().rtmp.player_queue;
  s.setup_timeout_ms = static_cast<uint64_t>(services_.loop.config().rtmp.handshake_timeout.count());
  ++connects_;
  set_state(State::Connecting, "");
  client_ = services_.make_link(std::move(s), this);
  if (client_ == nullptr) return fail("srt:// needs SRT, which this server was started without");
  client_->start();  // may fail at once: relay_closed has then run
}

void PushTarget::stop(const std::string& why) {
  if (state_ == State::Stopped) return;
  set_state(State::Stopped, why);
  if (client_) {
    RelayLink* c = client_;
    client_ = nullptr;
    bytes_done_ += c->link_peer().bytes_out();
    // A live push sends FCUnpublish + deleteStream behind its queued frames, meanwhile draining.
    c->detach(why, services_.draining);
  }
}

void PushTarget::relay_live(RelayLink&) {
  live_since_ms_ = services_.loop.now_ms();
  set_state(State::Live, "");
}

void PushTarget::relay_closed(RelayLink& c, const std::string& reason) {
  client_ = nullptr;
  bytes_done_ += c.link_peer().bytes_out();
  fail(reason);
}

void PushTarget::fail(const std::string& reason) {
  last_error_ = reason;
  if (state_ == State::Stopped) return;
  const uint64_t now = services_.loop.now_ms();
  if (state_ == State::Live && now - live_since_ms_ >= Backoff::kStableMs) backoff_.reset();
  const uint64_t delay = backoff_.next_delay_ms();
  at_ = (at_ + 1) % urls_.size();
  retry_at_ms_ = now + delay;
  set_state(State::Waiting, reason + "; retry in " + std::to_string(delay) + "ms");
}

void PushTarget::on_tick(uint64_t now_ms) {
  if (client_) client_->on_tick(now_ms);
  if (state_ == State::Waiting && now_ms >= retry_at_ms_) connect();
}

void PushTarget::set_state(State s, const std::string& why) {
  if (s == state_ && s != State::Connecting) return;
  state_ = s;
  // A failure is a warning; the normal steps (and the end, whatever its reason) are not.
  const bool failure = !why.empty() && s != State::Stopped;
  if (failure) {
    SLUICE_LOG_WARN("event=relay_push target={} stream={} url={} state={} attempt={} reason=\"{}\"", target_id_,
                    source_key_, urls_[at_].display(), relay_state_name(s), connects_, printable(why, 200));
  } else {
    SLUICE_LOG_INFO("event=relay_push target={} stream={} url={} state={} attempt={}{}", target_id_, source_key_,
                    urls_[at_].display(), relay_state_name(s), connects_,
                    why.empty() ? std::string() : " reason=\"" + printable(why, 200) + "\"");
  }
}

uint64_t PushTarget::bytes_out() const { return bytes_done_ + (client_ ? client_->link_peer().bytes_out() : 0); }

nlohmann::json PushTarget::status() const {
  return nlohmann::json{{"id", target_id_},
                        {"stream", source_key_},
                        {"url", urls_[at_].display()},
                        {"name", name_is_key_ ? std::string("(key)") : publish_name_},
                        {"state", relay_state_name(state_)},
                        {"connects", connects_},
                        {"failures", backoff_.failures()},
                        {"bytes_out", bytes_out()},
                        {"last_error", last_error_}};
}

}  // namespace sluice::server
