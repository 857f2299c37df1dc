// SrtConnection: one accepted SRT socket on its worker loop (docs/srt.md). The caller's stream id
// says what it wants: to publish (its MPEG-TS is demuxed into the stream's hub through a
// LivePublisher, server/ingest/) or to read (an SrtReader sends it the stream as MPEG-TS). Admission
// is the access gate's, as for RTMP (hooks see "protocol": "srt"); the stream id's form, the app and
// the key were already checked in the handshake (srt_handshake.hpp).
//
// I/O: the loop's SrtPoller says when the socket became readable, writable or broken
// (edge-triggered); the connection then reads until libsrt has nothing more. A reader's output is
// an SrtTsOutput's (srt_ts_output.hpp).
//
// Lifetime: the service owns it. close() ends everything at once (the publication, the reader,
// the socket) and hands the object back to the service, which deletes it on a later loop turn, so
// a close from inside any callback is safe; callbacks that may come after (a hook's answer) hold
// a weak token.
#pragma once

#include <srt/srt.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "protocol/srt_stream_id.hpp"
#include "server/access/gate.hpp"
#include "server/ingest/live_publisher.hpp"
#include "server/ingest/publish_claim.hpp"
#include "server/ingest/publish_services.hpp"
#include "server/io/flush_scheduler.hpp"
#include "server/io/net_address.hpp"
#include "server/io/player_output.hpp"
#include "server/srt/srt_reader.hpp"
#include "server/srt/srt_service.hpp"
#include "server/srt/srt_ts_io.hpp"
#include "server/srt/srt_ts_output.hpp"

namespace sluice::server {

class SrtConnection final : public SrtTsOutput, public PublisherHost, public SrtSocketOwner {
 public:
  SrtConnection(SrtService& service, PublishServices& services, SRTSOCKET socket, uint64_t id);
  ~SrtConnection();
  SrtConnection(const SrtConnection&) = delete;
  SrtConnection& operator=(const SrtConnection&) = delete;

  // Reads the caller's stream id and address and asks the access gate.
  void open();
  // What the poller saw: SRT_EPOLL_IN, OUT, ERR.
  void on_ready(int events) override;
  // Server stop, first step: a publication ends, so its players everywhere are told.
  void end_publishing(const std::string& why);

  SRTSOCKET socket() const { return socket_; }
  bool publishing() const { return publisher_ != nullptr; }
  bool reading() const { return reader_ != nullptr; }
  bool closed() const { return closed_; }
  const protocol::SrtStreamId& stream_id() const { return stream_; }
  const std::string& key() const { return key_; }  // "app/name" once admitted
  uint64_t started_ms() const { return started_ms_; }
  uint64_t dropped_frames() const { return reader_ ? reader_->dropped_frames() : 0; }
  const media::ts::TsDemuxer& demuxer() const { return receiver_.demuxer(); }

  // SessionPeer and PlayerOutput.
  uint64_t id() const override { return id_; }
  const std::string& peer() const override { return peer_.text; }
  uint64_t bytes_in() const override { return receiver_.bytes() + discarded_; }

  // Flushable.
  void close(const std::string& reason) override;

  // PublisherHost.
  const SessionPeer& publishing_peer() const override { return *this; }
  PublishServices& publish_services() override { return services_; }
  HookEvent hook_base_event(const std::string& stream) const override;
  void end_replaced_publisher(uint32_t stream_id, const std::string& why, bool same_connection) override;

 private:
  void admitted(const config::AppRef& app, AccessOutcome&& o);  // the app as asked about
  void publish(const config::AppConfig& app, AccessOutcome&& o, const PublishClaim& claim);
  void read(const config::AppConfig& app, AccessOutcome&& o);
  void refuse(const char* event, const std::string& reason);
  // Publisher: every message libsrt holds, through the demuxer into the hub.
  void receive_media();
  // Reader: whatever it sends is read and dropped (libsrt would otherwise hold it).
  void discard_input();
  void watch(int events);
  // SrtTsOutput.
  SRTSOCKET output_socket() const override { return socket_; }
  void watch_output(bool writable) override;
  const char* ended_reason() const override { return "the publication ended"; }

  SrtService& service_;
  PublishServices& services_;
  SRTSOCKET socket_;
  uint64_t id_;
  PeerAddress peer_;
  protocol::SrtStreamId stream_;
  std::string key_;
  uint64_t started_ms_;
  uint64_t discarded_ = 0;  // a reader's input
  uint64_t pending_gate_ = 0;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);

  SrtTsReceiver receiver_;
  std::unique_ptr<LivePublisher> publisher_;
};

}  // namespace sluice::server
