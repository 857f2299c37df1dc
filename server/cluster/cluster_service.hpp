// ClusterService: one loop's part in the cluster (docs/cluster.md): it claims the streams
// published on this loop in the registry, keeps the claims alive, releases them when their
// publishers leave and says when one was lost to another node. The rules are LeaseBook's
// (lease_book.hpp), the Redis connection RegistryClient's; this class adds the timer and turns
// replies into outcomes. Every loop has its own, with the same value for the whole node, so that
// a stream published on another loop of this node is told apart from one on another node.
#pragma once

#include <uv.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "config/cluster.hpp"
#include "server/cluster/lease_book.hpp"
#include "server/cluster/registry_client.hpp"
#include "server/relay/stream_locator.hpp"

namespace sluice::server::cluster {

// The cluster as the registry knows it, read every few seconds by the loop that keeps the node's
// record (loop 0): for /api/v1/cluster.
struct ClusterView {
  struct Node {
    std::string id;
    std::string record;  // the JSON the node wrote (advertise, version, started_ms)
  };
  struct Stream {
    std::string name;   // "app/name"
    std::string owner;  // node id
  };
  std::vector<Node> nodes;
  std::vector<Stream> streams;
  int64_t read_at_ms = -1;  // wall clock of the last successful read; -1 never
};

struct ClaimOutcome {
  ClaimResult result = ClaimResult::Owned;
  std::string owner;       // OwnedByOther: that node's id
  std::string taken_from;  // Owned by taking it from another node: that node's id
};

class ClusterService {
 public:
  using OnLost = std::function<void(const std::string& stream, const std::string& why)>;

  ClusterService(uv_loop_t* loop, const config::ClusterConfig& config, uint32_t worker);
  ~ClusterService();
  ClusterService(const ClusterService&) = delete;
  ClusterService& operator=(const ClusterService&) = delete;

  void start(OnLost on_lost);
  // This loop also keeps the node's record (`sluice:node:ID` with a TTL of three leases, and its id
  // in `sluice:nodes`) and reads the cluster view: `record` gives the JSON to write.
  void keep_node_record(std::function<std::string()> record);
  const ClusterView& view() const { return view_; }
  void stop();

  // A publish of `stream` ("app/name") asks for it. Owned when this node holds it now (or Redis
  // did not answer: then the claim is written when it does); OwnedByOther with the owner's id.
  // `take`: the publisher replaces one on another node (the app's publish_conflict is takeover and
  // cluster.duplicate_publish allows it): another node's claim is taken, and that node told at once
  // (docs/cluster.md, "A second publisher on another node"). A draining node's claim is taken always.
  void claim(const std::string& stream, bool take, std::function<void(ClaimOutcome)> done);
  // Its publisher left.
  void release(const std::string& stream);
  // Its publisher was taken over by one on another loop of this node, whose claim it is now: this
  // loop stops refreshing it and leaves it in the registry.
  void hand_over(const std::string& stream);
  // The other side of hand_over(): this loop's publisher took the stream over from another loop of
  // this node; this loop refreshes the claim (and releases it when its publisher leaves).
  void adopt(const std::string& stream);
  // The node drains: its claims may be taken over by the node a reconnecting publisher lands on.
  void drain();
  // Who owns `stream` now and where to pull it from (one round trip: the claim and the owner's
  // record). `done` runs exactly once.
  void locate(const std::string& stream, std::function<void(StreamLocation)> done);

  const LeaseBook& book() const { return book_; }
  const RegistryClient& client() const { return client_; }
  const config::ClusterConfig& config() const { return config_; }

 private:
  void tick();
  void write_record();
  void read_view();
  void take_over(const std::string& stream, const std::string& seen, std::function<void(ClaimOutcome)> done);
  void on_taken(const std::string& stream);
  void send_refresh(const std::string& stream, const RegistryCommand& command);
  int64_t now_ms() const { return static_cast<int64_t>(uv_now(loop_)); }

  uv_loop_t* loop_;
  const config::ClusterConfig& config_;
  std::string who_;
  LeaseBook book_;
  RegistryClient client_;
  RegistryClient listener_;  // subscribed to the channel on which a node that took a stream says so
  OnLost on_lost_;
  std::function<std::string()> record_;
  int64_t next_record_ms_ = 0;
  bool view_in_flight_ = false;
  ClusterView view_;
  uv_timer_t timer_{};
  bool started_ = false;
  bool stopped_ = false;
};

}  // namespace sluice::server::cluster
