// SrtRelayLink: an srt:// push target's or pull's connection (server/relay/relay_link.hpp), SRT
// in caller mode (docs/relays.md, "SRT targets and upstreams"). The URL's stream id says what to
// publish or read there; its passphrase and latency, else the server's srt: settings, apply.
//
// Push: once connected, an SrtReader (the same subscriber as an SRT reader's: queue, slow-player
// rules, its own TsMuxer) joins the local hub from the GOP cache's keyframe and its bytes go out
// as SRT messages. Pull: the upstream's MPEG-TS goes through the demuxer and each frame to the
// owner. A refusal by the other side closes the link with libsrt's reject reason (1403, ...).
//
// Lifetime: made by the loop's SrtService, which deletes it on a later loop turn once closed.
#pragma once

#include <srt/srt.h>
#include <uv.h>

#include <cstdint>
#include <memory>
#include <string>

#include "server/io/loop_context.hpp"
#include "server/relay/relay_link.hpp"
#include "server/srt/srt_reader.hpp"
#include "server/srt/srt_service.hpp"
#include "server/srt/srt_ts_io.hpp"
#include "server/srt/srt_ts_output.hpp"

namespace sluice::server {

class SrtRelayLink final : public RelayLink, public SrtTsOutput, public SrtSocketOwner {
 public:
  SrtRelayLink(SrtService& service, LoopContext& loop, uint64_t id, Settings settings, Owner* owner);
  ~SrtRelayLink();
  SrtRelayLink(const SrtRelayLink&) = delete;
  SrtRelayLink& operator=(const SrtRelayLink&) = delete;

  // RelayLink.
  void start() override;
  void detach(const std::string& why, Owner* drain) override;
  void on_tick(uint64_t now_ms) override;
  void close_link(const std::string& reason) override { close(reason); }
  const SessionPeer& link_peer() const override { return *this; }

  // SrtSocketOwner.
  void on_ready(int events) override;

  // SessionPeer and PlayerOutput (the push's reader writes through it).
  uint64_t id() const override { return id_; }
  const std::string& peer() const override { return peer_; }
  uint64_t bytes_in() const override { return receiver_.bytes(); }

  // Flushable.
  void close(const std::string& reason) override;

 private:
  static void on_resolved(uv_getaddrinfo_t* req, int status, addrinfo* res);
  void connect(const sockaddr* addr);
  void go_live();
  void receive();
  void watch(int events);
  // SrtTsOutput.
  SRTSOCKET output_socket() const override { return socket_; }
  void watch_output(bool writable) override;
  const char* ended_reason() const override { return "source ended"; }

  SrtService& service_;
  uint64_t id_;
  Settings settings_;
  Owner* owner_;
  std::string peer_;  // host:port, for the log
  SRTSOCKET socket_ = SRT_INVALID_SOCK;
  uv_getaddrinfo_t* resolving_ = nullptr;  // owned by libuv until its callback
  uint64_t started_ms_ = 0;
  uint64_t last_receive_ms_ = 0;
  bool live_ = false;
  SrtTsReceiver receiver_;
};

}  // namespace sluice::server
