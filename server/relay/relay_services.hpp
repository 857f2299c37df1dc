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
#include "server/relay/relay_link.hpp"

namespace sluice::server {

// Connections whose owner has gone but which still send their end (FCUnpublish behind the last
// frames): kept here so that they get their timeouts and a stopping server waits for them.
class DrainingRelays final : public RelayLink::Owner {
 public:
  void on_tick(uint64_t now_ms) {
    std::vector<RelayLink*> all(clients_.begin(), clients_.end());
    for (RelayLink* c : all) {
      if (clients_.count(c)) c->on_tick(now_ms);
    }
  }
  bool empty() const { return clients_.empty(); }
  void close_all(const std::string& why) {
    std::vector<RelayLink*> all(clients_.begin(), clients_.end());
    for (RelayLink* c : all) {
      if (clients_.count(c)) c->close_link(why);
    }
  }

 private:
  void relay_live(RelayLink&) override {}
  void relay_adopted(RelayLink& c) override { clients_.insert(&c); }
  void relay_closed(RelayLink& c, const std::string&) override { clients_.erase(&c); }
  std::unordered_set<RelayLink*> clients_;
};

struct RelayServices {
  LoopContext& loop;
  StreamRegistry& registry;
  std::shared_ptr<const TlsContext> tls_verify;
  std::shared_ptr<const TlsContext> tls_no_verify;
  DrainingRelays* draining = nullptr;
  // srt:// targets and upstreams (the SRT wing's links, given by the composition root); null: none.
  SrtLinkFactory srt_links;

  std::shared_ptr<const TlsContext> tls(bool verify) const { return verify ? tls_verify : tls_no_verify; }
  // Relay connection ids, distinct from accepted connections' (which count from 1 on each loop).
  // The link for `s.url`: a RelayClient for rtmp[s]://, the SRT wing's for srt://. Null when the
  // URL's protocol is not available on this loop (the owner then counts a failure).
  RelayLink* make_link(RelayLink::Settings s, RelayLink::Owner* owner) {
    const uint64_t id = next_id();
    if (s.url.srt) return srt_links ? srt_links(id, std::move(s), owner) : nullptr;
    return new RelayClient(loop, id, std::move(s), owner);
  }
  static uint64_t next_id() {
    static std::atomic<uint64_t> ids{uint64_t{1} << 40};
    return ids.fetch_add(1, std::memory_order_relaxed);
  }
};

}  // namespace sluice::server
