// WhepClient: one WHEP player (sluice-bench `whep`), without a browser:
//
//  1. Signalling: POST the offer (whep_sdp.hpp) to http://HOST:PORT/APP/STREAM/whep as
//     application/sdp; a 201's answer gives the server's ICE credentials, fingerprint and UDP
//     candidate, and its Location the resource to DELETE at the end. The connection is closed once
//     answered, as a page does nothing more on it.
//  2. ICE: from a UDP socket of its own (connected to the candidate), Binding requests with
//     USE-CANDIDATE every 500 ms until one succeeds (stun_client.hpp).
//  3. DTLS 1.2 as the client over the same socket (dtls_client.hpp), retransmitting on OpenSSL's
//     timer; the server's certificate must match the answer's fingerprint.
//  4. Media: the server sends SRTP. Nothing is decrypted: RtpMonitor reads the clear RTP headers
//     (loss, frames, freezes, time to first frame). A Binding request every --consent-ms keeps the
//     session alive (the server drops one silent for webrtc.session_timeout). No RTCP is sent
//     (no receiver reports, no NACKs: lost packets stay lost and are counted).
//  5. stop(): the socket closes, then DELETE of the Location (3 s at most), whose status is counted.
//
// Each step has a 10-s limit; a player that never gets a whole video frame has failed, with the
// step it was in as the reason. Datagrams are read with recvmmsg (libuv's UV_UDP_RECVMMSG) into
// one buffer the players share (each read is handled before the next).
//
// Figures (ClientStats): bytes_in / bytes_out are UDP payloads (SRTP, SRTCP, STUN, DTLS) plus the
// HTTP exchanges; messages_in RTP packets; setup = start -> offer written; ttff = offer written ->
// end of the first video frame; stalls = freezes (RtpMonitor). The rest goes to WhepContext.
//
// Lifecycle: as the other clients: construct, start() once, stop(), run the loop dry, destroy.
#pragma once

#include <uv.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "bench/load/client.hpp"
#include "bench/load/dtls_client.hpp"
#include "bench/load/http_keepalive.hpp"
#include "bench/load/http_url.hpp"
#include "bench/load/rtp_monitor.hpp"
#include "bench/load/stun_client.hpp"
#include "bench/load/whep_context.hpp"

namespace sluice::bench {

class WhepClient final : public Client, private HttpKeepAlive::Handler {
 public:
  WhepClient(uv_loop_t* loop, const HttpUrl& url, WhepContext& ctx, ClientStats identity);
  ~WhepClient() override;
  WhepClient(const WhepClient&) = delete;
  WhepClient& operator=(const WhepClient&) = delete;

  void start() override;
  void tick(int64_t now_ns) override;
  void stop() override;
  const ClientStats& stats() override;

 private:
  enum class State : uint8_t { Idle, Offering, Checking, Handshaking, Playing, Done };

  void on_response(HttpResponse& response) override;
  void on_http_error(const std::string& reason) override;
  void on_answer(const HttpResponse& response);
  void on_deleted(const std::string& outcome);
  bool open_udp(const sockaddr_storage& to);
  void send(std::span<const uint8_t> datagram);
  void send_all(DtlsClient::Datagrams& datagrams);
  void on_datagram(std::span<const uint8_t> datagram, int64_t now);
  void on_stun(std::span<const uint8_t> datagram, int64_t now);
  void on_dtls(std::span<const uint8_t> datagram, int64_t now);
  void fail(const std::string& reason);
  void close_udp();
  void record();  // the player's figures into the context, once

  static void on_alloc(uv_handle_t* handle, size_t suggested, uv_buf_t* buf) noexcept;
  static void on_recv(uv_udp_t* handle, ssize_t nread, const uv_buf_t* buf, const sockaddr* addr,
                      unsigned flags) noexcept;
  static void on_delete_timeout(uv_timer_t* timer) noexcept;

  uv_loop_t* loop_;
  HttpUrl url_;
  WhepContext& ctx_;
  ClientStats stats_;
  HttpKeepAlive http_;
  State state_ = State::Idle;
  std::string ufrag_, pwd_;
  std::string location_;
  uv_udp_t udp_{};
  bool udp_open_ = false;
  uv_timer_t delete_timer_{};
  bool deleting_ = false;
  StunCheck stun_;
  std::unique_ptr<DtlsClient> dtls_;
  RtpMonitor rtp_;
  uint64_t udp_in_ = 0, udp_out_ = 0;
  // Step times (ns, 0 until reached).
  int64_t offer_ns_ = 0, answer_ns_ = 0, ice_start_ns_ = 0, ice_done_ns_ = 0, dtls_done_ns_ = 0;
  int64_t step_deadline_ns_ = 0;
  int64_t next_stun_ns_ = 0;
  uint64_t stun_sent_ = 0;
  bool recorded_ = false;
};

}  // namespace sluice::bench
