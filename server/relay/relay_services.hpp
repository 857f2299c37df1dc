// What push targets and pulls reach on their worker loop: the loop, its stream registry, the TLS
// client contexts for rtmps:// (one that verifies, one that does not, made once) and ids.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_set>

#include "server/io/loop_context.hpp"
#include "server/io/tls_context.hpp"
#include "server/live/stream_registry.hpp"
#include "server/relay/relay_client.hpp"

namespace sluice::server {

// Connections whose owner has gone but which still send their end (FCUnpublish behind the last
// frames): kept here so that they get their timeouts and a stopping server waits for them.
class DrainingRelays final : public RelayClient::Owner {
 public:
  void on_tick(uint64_t now_ms) {
    std::vector<RelayClient*> all(clients_.begin(), clients_.end());
    for (RelayClient* c : all) {
      if (clients_.count(c)) c->on_tick(now_ms);
    }
  }
  bool empty() const { return clients_.empty(); }
  void close_all(const std::string& why) {
    std::vector<RelayClient*> all(clients_.begin(), clients_.end());
    for (RelayClient* c : all) {
      if (clients_.count(c)) c->close(why);
    }
  }

 private:
  void relay_live(RelayClient&) override {}
  void relay_adopted(RelayClient& c) override { clients_.insert(&c); }
  void relay_closed(RelayClient& c, const std::string&) override { clients_.erase(&c); }
  std::unordered_set<RelayClient*> clients_;
};

struct RelayServices {
  LoopContext& loop;
  StreamRegistry& registry;
  std::shared_ptr<const TlsContext> tls_verify;
  std::shared_ptr<const TlsContext> tls_no_verify;
  DrainingRelays* draining = nullptr;

  std::shared_ptr<const TlsContext> tls(bool verify) const { return verify ? tls_verify : tls_no_verify; }
  // Relay connection ids, distinct from accepted connections' (which count from 1 on each loop).
  static uint64_t next_id() {
    static std::atomic<uint64_t> ids{uint64_t{1} << 40};
    return ids.fetch_add(1, std::memory_order_relaxed);
  }
};

}  // namespace sluice::server
