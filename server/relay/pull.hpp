// Pull: one local stream fed from an upstream server (apps.NAME.pull, and every stream of an edge
// app): the upstream is played through a RelayLink (RTMP or SRT) and its messages are published into the
// local hub, which fans them out to every local player, HTTP-FLV reader, recorder and push target,
// and through the worker mesh to the other loops. One Pull per stream per server (they all run on
// worker 0), however many players join.
//
// States: connecting -> live (playing there; the local stream is published while the upstream's
// is) -> [lost] -> the next upstream at once, or, after a whole round of failures, waiting
// (backoff) -> connecting ... An on-demand pull ends `idle` after the stream's last player left.
//
// A cluster pull (docs/cluster.md, "Location") has no configured upstream: before each attempt it
// asks the registry which node owns the stream (locating), pulls from that node's advertised
// address with the internal token, and after a loss or when nobody owns it asks again within a
// second, so players keep waiting and get the stream wherever its publisher comes back.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "media/stream_hub.hpp"
#include "media/timestamp_corrector.hpp"
#include "server/io/guard_counters.hpp"
#include "server/live/publication.hpp"
#include "server/live/stream_registry.hpp"
#include "server/relay/backoff.hpp"
#include "server/relay/relay_link.hpp"
#include "server/relay/stream_locator.hpp"

namespace sluice::server {

struct RelayServices;

class Pull final : public RelayLink::Owner, public PublisherSeat {
 public:
  enum class State : uint8_t { Locating, Connecting, Live, Waiting, Ended };

  struct Settings {
    std::string key;                  // "app/name"
    std::string name;                 // the local stream name
    std::vector<RelayUrl> upstreams;  // empty for a cluster pull (located each time)
    StreamLocator locate;             // set: a cluster pull
    std::string query;                // appended to the played name ("a=b"), for the token
    bool on_demand = true;
    uint64_t idle_ms = 10'000;
    bool verify = true;
    uint32_t timestamp_jump_ms = 1000;
    media::StreamHub::Options hub;
    // A cluster pull that continues a publication of this node a publisher on another node took
    // over (RelayManager::follow): its first frames go on from continue_after; if it gets no
    // stream, the publication ends for the players after all.
    Handover follows;
    std::string origin;  // what the configuration said of it (relay_reload.cpp compares it)
  };

  Pull(RelayServices& services, Settings settings);
  ~Pull() override;
  Pull(const Pull&) = delete;
  Pull& operator=(const Pull&) = delete;

  void start();
  void on_tick(uint64_t now_ms);
  // Ended: idle, or the name is published here by someone else. The manager then deletes it.
  bool ended() const { return state_ == State::Ended; }
  void end(const std::string& why);
  const std::string& key() const { return settings_.key; }
  const Settings& settings() const { return settings_; }
  nlohmann::json status() const;

  // PublisherSeat (server/live/stream_registry.hpp): a publisher here takes the name over. An
  // edge's own publisher: the pull ends, and its players are told (another source, not a
  // reconnect). A cluster pull: the stream's publisher reconnected here (docs/cluster.md, "A second
  // publisher on another node"), so the publication ends quietly for the taker's to continue.
  uint64_t quiet_ms() const override;
  std::optional<uint32_t> give_up(const std::string& why, const SessionPeer* taker) override;

 private:
  void relay_live(RelayLink& c) override;
  void relay_media(RelayLink& c, protocol::Message& m) override;
  void relay_source_end(RelayLink& c) override;
  void relay_closed(RelayLink& c, const std::string& reason) override;
  void connect();
  void locate();
  void on_located(const StreamLocation& where);
  void wait_to_retry(const std::string& why);
  void set_state(State s, const std::string& why);
  void end_publication();
  void abandon_handover();
  void let_go(RelayLink& c);
  bool in_use() const;
  std::string upstream_display() const;

  RelayServices& services_;
  Settings settings_;
  RelayLink* client_ = nullptr;
  const SessionPeer* claimed_by_ = nullptr;  // the connection the name is claimed for
  media::StreamHub* hub_ = nullptr;
  std::optional<Publication> publication_;  // while the upstream sends media
  State state_ = State::Connecting;
  size_t upstream_ = 0;         // the one tried now
  size_t failed_in_round_ = 0;  // upstreams failed since one last worked
  Backoff backoff_;
  uint64_t retry_at_ms_ = 0;
  uint64_t live_since_ms_ = 0;
  uint64_t last_frame_ms_ = 0;    // when the upstream last sent media (or went live)
  LogRateLimit jump_log_;         // an upstream whose clock jumps on every message must not flood the log
  uint64_t unused_since_ms_ = 0;  // 0: in use
  uint64_t connects_ = 0;
  uint64_t frames_ = 0;
  uint64_t bytes_in_done_ = 0;
  std::string last_error_;
  std::string last_logged_;  // a cluster pull's repeated waits are logged once
  // Alive while this pull is: a registry answer that comes after the pull ended is dropped.
  std::shared_ptr<char> alive_ = std::make_shared<char>();
};

}  // namespace sluice::server
