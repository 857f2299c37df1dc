// limits.per_ip: open connections from one address, over every worker, RTMP and HTTP together.
// A connection takes a PeerSlot once its address is known and gives it back when it is destroyed.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace sluice::server {

class PeerSlot {
 public:
  PeerSlot() = default;
  ~PeerSlot();
  PeerSlot(PeerSlot&& o) noexcept : key_(std::move(o.key_)), held_(o.held_) { o.held_ = false; }
  PeerSlot& operator=(PeerSlot&& o) noexcept;
  PeerSlot(const PeerSlot&) = delete;
  PeerSlot& operator=(const PeerSlot&) = delete;

  // Counts one connection from `peer` (raw address bytes); false, and nothing counted, when the
  // address already has `per_ip` (0: no limit, nothing counted either).
  bool take(std::span<const uint8_t> peer, uint32_t per_ip);
  void release();

  // Connections counted now for this address (tests, the log line of a refusal).
  static uint32_t count(std::span<const uint8_t> peer);

 private:
  std::string key_;
  bool held_ = false;
};

}  // namespace sluice::server
