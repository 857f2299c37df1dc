// IdleSocket: a StreamSocket that is never opened, for unit tests of what lives on a socket (live
// subscribers, the HTTP-FLV player) and only asks it for flushes.
#pragma once

#include <span>
#include <string>

#include "server/io/loop_context.hpp"
#include "server/io/stream_socket.hpp"
#include "server/io/write_batch.hpp"

namespace sluice::server {

class IdleSocket final : public StreamSocket {
 public:
  explicit IdleSocket(LoopContext& loop) : StreamSocket(loop, 7) {}
  ~IdleSocket() override { loop_.flush().cancel(this); }

 private:
  void on_bytes(std::span<const uint8_t>) override {}
  bool fill(WriteBatch&, size_t) override { return false; }
  void keep_unwritten(std::span<const uint8_t>) override {}
  void on_close(const std::string&) override {}
};

}  // namespace sluice::server
