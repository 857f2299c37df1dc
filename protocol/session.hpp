// protocol::Session: one RTMP connection's protocol state, sans I/O.
//
// The I/O layer feeds received bytes and gets events back; replies and media it asks for are
// appended to an output buffer it drains and writes. The session runs handshake -> connect ->
// streams, and handles chunk size, acknowledgements, window size and pings itself, so the
// application only sees what it must decide on (connect, publish, play, ...) and media.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "protocol/amf_value.hpp"
#include "protocol/chunk_reader.hpp"
#include "protocol/chunk_writer.hpp"
#include "protocol/commands.hpp"
#include "protocol/control_messages.hpp"
#include "protocol/handshake.hpp"
#include "protocol/message.hpp"
#include "protocol/status.hpp"
#include "base/result.hpp"

namespace sluice::protocol {

enum class SessionRole : uint8_t { Server, Client };

struct SessionOptions {
  SessionRole role = SessionRole::Server;
  HandshakeOptions handshake;
  ChunkReaderLimits chunk_limits;
  // At most this many createStream per connection: bounds per-connection stream state.
  uint32_t max_streams = 16;
  // Until the connect is through (server: it accepted the peer's; client: the peer answered ours
  // with _result), incoming messages are at most this big (and partial messages hold at most twice
  // that), so a peer pins little memory before it is known; 0 keeps chunk_limits from the start.
  uint32_t pre_connect_max_message_size = 64 * 1024;
  // What a peer may hold in partial messages follows its role (docs/configuration.md, "Limits").
  // One that sends media (a publisher, from its publish command on; a client's upstream, from the
  // answer to our connect) may hold `media_partial_factor` times its largest media message so far,
  // at least `media_partial_floor` (its first keyframe must fit), at most
  // chunk_limits.max_buffered_bytes; its messages may be that big too. Anyone else (a player, a
  // connection that has not published) keeps the pre-connect bound for its whole life.
  uint64_t media_partial_floor = 2u << 20;
  uint32_t media_partial_factor = 4;
  // Window we announce to the peer (server: on connect) and our default ack window for a peer
  // that never announces one (some encoders stall without acknowledgements).
  uint32_t window_ack_size = 2'500'000;
  // Our outgoing chunk size: server sends it on connect, client before connect.
  uint32_t chunk_size = 4096;
};

// Starts the note a chunk-stream error carries when the peer passed its role's bound on partial
// messages (SessionOptions::media_partial_floor), so the server can count those closes.
inline constexpr const char* kPartialBoundMark = "partial-message bound of";

inline SessionOptions options_for(SessionRole role) {
  SessionOptions o;
  o.role = role;
  return o;
}

// ---- Events (what feed() reports) ----
struct HandshakeDoneEvent {};
struct ConnectEvent {
  ConnectCommand connect;
};
struct StreamCreatedEvent {  // server: it answered createStream; client: the server answered ours
  double transaction_id = 0;
  uint32_t stream_id = 0;
};
struct PublishEvent {
  uint32_t stream_id = 0;
  PublishCommand publish;
};
struct PlayEvent {
  uint32_t stream_id = 0;
  PlayCommand play;
};
struct PauseEvent {
  uint32_t stream_id = 0;
  bool pause = true;
  double position_ms = 0;
};
struct SeekEvent {
  uint32_t stream_id = 0;
  double position_ms = 0;
};
struct ReceiveMediaEvent {  // receiveAudio / receiveVideo
  uint32_t stream_id = 0;
  bool video = false;
  bool enabled = true;
};
struct CloseStreamEvent {  // closeStream (stream stays allocated) or deleteStream
  uint32_t stream_id = 0;
  bool deleted = false;
};
struct UnpublishEvent {  // FCUnpublish: the session already answered _result
  std::string name;
};
struct GetStreamLengthEvent {  // the application answers with reply_stream_length()
  double transaction_id = 0;
  uint32_t stream_id = 0;
  std::string name;
};
struct SetBufferLengthEvent {
  uint32_t stream_id = 0;
  uint32_t buffer_ms = 0;
};
struct MediaEvent {  // audio (8), video (9), data (18, or 15 with its format byte removed); aggregates are split
  Message message;
};
struct StatusEvent {  // onStatus / onFCPublish / onFCUnpublish received (client side mostly)
  uint32_t stream_id = 0;
  std::string name;
  amf::Value info;
  std::string level() const { return info.get_string("level"); }
  std::string code() const { return info.get_string("code"); }
};
struct ResultEvent {  // _result / _error received (client side)
  uint32_t stream_id = 0;
  bool error = false;
  Command command;
};
struct CreateStreamRefusedEvent {  // createStream past max_streams (answered with _error)
  double transaction_id = 0;
};
struct StreamIdRefusedEvent {  // a stream command on an id createStream never returned (refused, replied to)
  uint32_t stream_id = 0;
  std::string command;
};
struct CommandEvent {  // any other command; the application may ignore it
  uint32_t stream_id = 0;
  Command command;
};
struct PingResponseEvent {
  uint32_t timestamp = 0;
};
struct UserControlMessageEvent {  // any other user control event (client side: StreamBegin, StreamEOF, ...)
  UserControl control;
};

using SessionEvent =
    std::variant<HandshakeDoneEvent, ConnectEvent, StreamCreatedEvent, PublishEvent, PlayEvent, PauseEvent, SeekEvent,
                 ReceiveMediaEvent, CloseStreamEvent, UnpublishEvent, GetStreamLengthEvent, SetBufferLengthEvent,
                 MediaEvent, StatusEvent, ResultEvent, CreateStreamRefusedEvent, StreamIdRefusedEvent, CommandEvent,
                 PingResponseEvent, UserControlMessageEvent>;

class Session {
 public:
  explicit Session(SessionOptions options = {});

  // Consumes received bytes (any split) and appends what happened to `events`. On error the
  // session is failed: the caller logs the error and closes the connection.
  Result<void> feed(std::span<const uint8_t> in, std::vector<SessionEvent>& events);

  // Output: queued wire bytes, in order.
  void drain_output(std::vector<uint8_t>& out);
  bool has_output() const { return !out_.empty(); }
  size_t output_size() const { return out_.size(); }

  bool handshake_done() const { return !handshake_; }
  HandshakeScheme handshake_scheme() const { return scheme_; }
  bool failed() const { return failed_; }
  // True after a reply that ends the connection (connect rejected): flush output, then close.
  bool closing() const { return closing_; }
  void close_after_flush() { closing_ = true; }
  const ConnectCommand& connect_info() const { return connect_; }
  uint64_t bytes_received() const;
  // Memory held for partially received messages (bounded by chunk_limits.max_buffered_bytes).
  uint64_t reassembly_bytes() const { return reader_.reserved_bytes(); }
  // The bound on this peer's partial messages now (its role's: see SessionOptions).
  uint64_t partial_bound() const { return reader_.limits().max_buffered_bytes; }
  SessionRole role() const { return options_.role; }

  // For the fan-out path: the server writes media with the shared pre-chunked body directly. It
  // must drain_output() before using the writer so bytes stay in order.
  ChunkWriter& chunk_writer() { return writer_; }

  // ---- Server replies ----
  void accept_connect(const amf::Properties& extra_server_props = {});
  void reject_connect(std::string_view description);
  void accept_publish(uint32_t stream_id, std::string_view name);
  // onStatus with an error-level code (Publish.BadName, Publish.Unauthorized).
  void reject_publish(uint32_t stream_id, Status code, std::string_view description);
  // StreamIsRecorded (VOD), StreamBegin, Play.Reset (when reset), Play.Start, |RtmpSampleAccess.
  void start_play(uint32_t stream_id, std::string_view name, bool reset, bool recorded);
  // StreamEOF, Pause.Notify / StreamBegin, Unpause.Notify.
  void notify_pause(uint32_t stream_id, std::string_view description, amf::Properties extra = {});
  void notify_unpause(uint32_t stream_id, std::string_view description, amf::Properties extra = {});
  // Seek.Notify "Seeking <name>.", Play.Start "Started playing <name>.", both with `extra`.
  void notify_seek(uint32_t stream_id, std::string_view name, const amf::Properties& extra = {});
  // onPlayStatus, a data message (Play.Switch, Play.Complete).
  void send_play_status(uint32_t stream_id, Status code, std::string_view description, amf::Properties extra = {});
  void reply_stream_length(double transaction_id, double seconds);
  void reply_unpublish(uint32_t stream_id, std::string_view name);  // onFCUnpublish + onStatus Unpublish.Success
  // onStatus NetConnection.Connect.ReconnectRequest on stream 0, with the tcUrl to reconnect to
  // (omitted when empty: the client's own). Only for a client whose connect_info().can_reconnect().
  void request_reconnect(std::string_view tc_url, std::string_view description);

  // ---- Client requests ----
  void connect(std::string_view app, std::string_view tc_url, const amf::Properties& extra = {});
  double create_stream();  // returns the transaction id; StreamCreatedEvent follows
  void publish(uint32_t stream_id, std::string_view name, std::string_view type = "live");
  void play(uint32_t stream_id, std::string_view name, double start = -2000, double duration = -1, bool reset = true);
  void pause(uint32_t stream_id, bool pause, double position_ms);
  void seek(uint32_t stream_id, double position_ms);
  void delete_stream(uint32_t stream_id);
  void set_buffer_length(uint32_t stream_id, uint32_t ms);

  // ---- Both roles ----
  // onStatus; the level comes with the code (protocol/status.hpp).
  void send_status(uint32_t stream_id, Status code, std::string_view description, amf::Properties extra = {});
  void send_command(uint32_t stream_id, std::string_view name, double transaction_id, const amf::Value& object,
                    std::span<const amf::Value> args = {});
  void send_data(uint32_t stream_id, std::string_view name, std::span<const amf::Value> args = {});
  void send_user_control(const UserControl& uc);
  void send_ping_request(uint32_t timestamp);
  void send_media(uint32_t stream_id, uint8_t type, uint32_t timestamp, std::span<const uint8_t> payload);
  // A media message whose payload is head followed by body (a VOD tag prefix and the file's bytes).
  void send_media(uint32_t stream_id, uint8_t type, uint32_t timestamp, std::span<const uint8_t> head,
                  std::span<const uint8_t> body);
  // The same, appended to `out` instead of the session's output, for a caller that writes it to
  // the socket itself (after the handshake). The chunk writer's header state assumes its bytes
  // reach the peer in the order it produced them: `out` goes out after the output queued so far
  // (written at once only while !has_output(), else queued behind it with queue_raw_output) and
  // before anything sent later.
  void write_media_to(std::vector<uint8_t>& out, uint32_t stream_id, uint8_t type, uint32_t timestamp,
                      std::span<const uint8_t> head, std::span<const uint8_t> body);
  // Bytes such a caller produced but could not write: they go out after the output queued so far.
  void queue_raw_output(std::span<const uint8_t> bytes) { out_.insert(out_.end(), bytes.begin(), bytes.end()); }
  void send_set_chunk_size(uint32_t size);

  static uint32_t media_csid(uint8_t type);

 private:
  Result<void> on_message(Message& m, std::vector<SessionEvent>& events);
  Result<void> on_control(const Message& m, std::vector<SessionEvent>& events);
  Result<void> on_command(const Message& m, std::vector<SessionEvent>& events);
  Result<void> on_server_command(Command& cmd, uint32_t stream_id, std::vector<SessionEvent>& events);
  Result<void> on_connect_command(Command& cmd, std::vector<SessionEvent>& events);
  void answer_create_stream(const Command& cmd, std::vector<SessionEvent>& events);
  Result<void> on_client_command(Command& cmd, uint32_t stream_id, std::vector<SessionEvent>& events);
  Result<void> on_aggregate(const Message& m, std::vector<SessionEvent>& events);
  void maybe_acknowledge();
  void write_message(uint32_t csid, uint8_t type, uint32_t timestamp, uint32_t stream_id,
                     std::span<const uint8_t> payload, std::span<const uint8_t> payload_tail = {});
  Result<uint32_t> allocate_stream();
  std::string partial_bound_text() const;  // why the bound is what it is, for the error
  void receive_media();                    // the peer sends media from now on: its partial bound grows
  void note_media_size(size_t bytes);      // ... with the largest media message it sent
  bool stream_allocated(uint32_t stream_id) const;

  SessionOptions options_;
  // Freed once the handshake is over: its 3 KB of buffers would otherwise stay with every player.
  std::unique_ptr<Handshake> handshake_;
  HandshakeScheme scheme_ = HandshakeScheme::Simple;
  ChunkReader reader_;
  ChunkWriter writer_;
  std::vector<uint8_t> out_;
  // Messages a client asks to send before its handshake finished wait here.
  std::vector<uint8_t> pending_until_handshake_;
  std::vector<Message> messages_;  // scratch, reused between feeds
  ConnectCommand connect_;
  bool connected_ = false;
  bool receives_media_ = false;
  uint64_t largest_media_ = 0;
  bool failed_ = false;
  bool closing_ = false;
  uint64_t handshake_bytes_ = 0;
  uint32_t peer_window_ = 0;
  uint64_t last_ack_at_ = 0;
  std::vector<uint32_t> streams_;  // allocated message stream ids
  uint32_t next_stream_id_ = 1;
  double next_transaction_id_ = 2;
  std::vector<double> pending_create_stream_;  // client: transaction ids of createStream calls
};

}  // namespace sluice::protocol
