// PushTarget: one local stream restreamed to one target (apps.NAME.push, or added through the
// API), as long as the stream is published. A state machine over RelayLink connections (RTMP or SRT):
//   connecting -> live (publishing there) -> [connection lost] -> waiting (backoff) -> connecting ...
//   any state -> stopped (source ended or target removed; a live connection sends FCUnpublish).
// Each change of state is one log line; status() is what the API, /metrics and the page show.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/relay/backoff.hpp"
#include "server/relay/relay_link.hpp"

namespace sluice::server {

struct RelayServices;

class PushTarget final : public RelayLink::Owner {
 public:
  enum class State : uint8_t { Connecting, Live, Waiting, Stopped };

  // target_id: stable for the API (config targets "app#i", runtime ones "r<n>").
  // publish_name: the name published there (a platform's stream key when name_is_key: never shown).
  // urls: tried in turn, the next after each failure (an edge's origins); usually one.
  PushTarget(RelayServices& services, std::string target_id, std::vector<RelayUrl> urls, std::string publish_name,
             bool name_is_key, bool verify, std::string source_key, media::StreamHub& hub);
  ~PushTarget() override;
  PushTarget(const PushTarget&) = delete;
  PushTarget& operator=(const PushTarget&) = delete;

  void start();
  // The source ended or the target was removed: a live connection ends its publish cleanly.
  void stop(const std::string& why);
  void on_tick(uint64_t now_ms);

  const std::string& target_id() const { return target_id_; }
  const std::string& source_key() const { return source_key_; }
  // What the configuration said of this target when it started (relay_reload.cpp compares it).
  const std::string& origin() const { return origin_; }
  void set_origin(std::string origin) { origin_ = std::move(origin); }
  State state() const { return state_; }
  nlohmann::json status() const;
  uint64_t bytes_out() const;

 private:
  void relay_live(RelayLink& c) override;
  void relay_closed(RelayLink& c, const std::string& reason) override;
  void connect();
  // The connection failed or ended: wait (backoff), then try the next URL.
  void fail(const std::string& reason);
  void set_state(State s, const std::string& why);

  RelayServices& services_;
  std::string target_id_;
  std::vector<RelayUrl> urls_;
  size_t at_ = 0;
  std::string publish_name_;
  bool name_is_key_;
  bool verify_;
  std::string source_key_;
  std::string origin_;
  media::StreamHub& hub_;
  RelayLink* client_ = nullptr;
  State state_ = State::Connecting;
  Backoff backoff_;
  uint64_t retry_at_ms_ = 0;
  uint64_t live_since_ms_ = 0;
  uint64_t connects_ = 0;
  uint64_t bytes_done_ = 0;  // of the connections that ended
  std::string last_error_;
};

const char* relay_state_name(PushTarget::State s);

}  // namespace sluice::server
