#include "protocol/session.hpp"

#include <algorithm>
#include <cassert>

#include "protocol/amf0.hpp"
#include "base/byte_io.hpp"

namespace sluice::protocol {

namespace {

constexpr uint32_t kControlStream = 0;
// Sub-messages of an aggregate carry an 11-byte FLV-style tag header and a 4-byte back-pointer.
constexpr size_t kAggregateTagHeader = 11;
constexpr size_t kAggregateBackPointer = 4;

amf::Value number(double v) { return amf::Value::number(v); }
amf::Value str(std::string_view s) { return amf::Value::string(std::string(s)); }

}  // namespace

namespace {
// What a session accepts before the connect is through: small messages, little held in partial
// ones (a client's server answers connect with a few small messages; a relay's upstream is a peer
// like any other).
ChunkReaderLimits initial_limits(const SessionOptions& o) {
  ChunkReaderLimits l = o.chunk_limits;
  if (o.pre_connect_max_message_size == 0) return l;
  l.max_message_size = std::min(l.max_message_size, o.pre_connect_max_message_size);
  l.max_buffered_bytes = std::min<uint64_t>(l.max_buffered_bytes, 2 * uint64_t{o.pre_connect_max_message_size});
  return l;
}
}  // namespace

Session::Session(SessionOptions options)
    : options_(std::move(options)),
      handshake_(std::make_unique<Handshake>(
          options_.role == SessionRole::Server ? HandshakeRole::Server : HandshakeRole::Client, options_.handshake)),
      reader_(initial_limits(options_)) {
  handshake_->drain_output(out_);
}

uint64_t Session::bytes_received() const { return handshake_bytes_ + reader_.bytes_received(); }

std::string Session::partial_bound_text() const {
  const uint64_t floor_kib = options_.media_partial_floor / 1024;
  if (receives_media_) {
    return std::string(kPartialBoundMark) +
           " a peer that sends media: " + std::to_string(options_.media_partial_factor) +
           " times its largest message so far, at least " + std::to_string(floor_kib) + " KiB";
  }
  return std::string(kPartialBoundMark) +
         (connected_ ? " a connection that has not published" : " a peer before connect");
}

void Session::receive_media() {
  if (receives_media_) return;
  receives_media_ = true;
  note_media_size(0);
}

void Session::note_media_size(size_t bytes) {
  if (!receives_media_ || (bytes <= largest_media_ && bytes != 0)) return;
  largest_media_ = std::max<uint64_t>(largest_media_, bytes);
  // Without a pre-connect bound (0) the full limits applied from the start.
  if (options_.pre_connect_max_message_size == 0) return;
  ChunkReaderLimits l = options_.chunk_limits;
  const uint64_t grown = std::max(options_.media_partial_floor, largest_media_ * options_.media_partial_factor);
  l.max_buffered_bytes = std::min(l.max_buffered_bytes, grown);
  l.max_message_size = static_cast<uint32_t>(std::min<uint64_t>(l.max_message_size, l.max_buffered_bytes));
  if (l.max_buffered_bytes > reader_.limits().max_buffered_bytes) reader_.set_limits(l);
}

void Session::drain_output(std::vector<uint8_t>& out) {
  if (out.empty()) {
    out.swap(out_);
  } else {
    out.insert(out.end(), out_.begin(), out_.end());
  }
  out_.clear();
}

Result<void> Session::feed(std::span<const uint8_t> in, std::vector<SessionEvent>& events) {
  if (failed_) return Error(Errc::Closed, "session already failed");
  size_t pos = 0;
  if (handshake_) {
    auto consumed = handshake_->feed(in);
    handshake_->drain_output(out_);
    if (!consumed) {
      failed_ = true;
      return Error(consumed.error()).wrap("handshake");
    }
    pos = *consumed;
    handshake_bytes_ += pos;
    if (!handshake_->done()) return ok();
    scheme_ = handshake_->scheme();
    handshake_.reset();
    events.emplace_back(HandshakeDoneEvent{});
    out_.insert(out_.end(), pending_until_handshake_.begin(), pending_until_handshake_.end());
    pending_until_handshake_.clear();
    pending_until_handshake_.shrink_to_fit();
  }
  if (pos == in.size()) return ok();

  messages_.clear();
  auto fed = reader_.feed(in.subspan(pos), messages_);
  // Messages completed before a violation are still handled: they were valid.
  for (auto& m : messages_) {
    auto handled = on_message(m, events);
    if (!handled) {
      failed_ = true;
      messages_.clear();
      return handled;
    }
  }
  messages_.clear();
  if (!fed) {
    failed_ = true;
    if (fed.error().code == Errc::LimitExceeded) {
      return Error(Errc::LimitExceeded, fed.error().context + " (" + partial_bound_text() + ")").wrap("chunk stream");
    }
    return Error(fed.error()).wrap("chunk stream");
  }
  maybe_acknowledge();
  return ok();
}

void Session::maybe_acknowledge() {
  uint64_t total = bytes_received();
  uint32_t window = peer_window_ ? peer_window_ : options_.window_ack_size;
  if (total - last_ack_at_ < window) return;
  last_ack_at_ = total;
  // The sequence number wraps modulo 2^32 (FMLE-era peers expect that).
  write_message(csid::kControl, msg_type::kAcknowledgement, 0, kControlStream, build_u32(static_cast<uint32_t>(total)));
}

Result<void> Session::on_message(Message& m, std::vector<SessionEvent>& events) {
  switch (m.type) {
    case msg_type::kSetChunkSize:
    case msg_type::kAbort:
    case msg_type::kAcknowledgement:
    case msg_type::kUserControl:
    case msg_type::kWindowAckSize:
    case msg_type::kSetPeerBandwidth: return on_control(m, events);
    case msg_type::kAudio:
    case msg_type::kVideo:
    case msg_type::kDataAmf0:
      note_media_size(m.payload.size());
      events.emplace_back(MediaEvent{std::move(m)});
      return ok();
    case msg_type::kDataAmf3:
      // The AMF3 flavour is a format byte followed by AMF0 values (which may switch to AMF3).
      if (!m.payload.empty()) {
        m.payload = m.payload.share(1, m.payload.size() - 1);
        m.type = msg_type::kDataAmf0;
        events.emplace_back(MediaEvent{std::move(m)});
      }
      return ok();
    case msg_type::kCommandAmf0:
    case msg_type::kCommandAmf3: return on_command(m, events);
    case msg_type::kAggregate: note_media_size(m.payload.size()); return on_aggregate(m, events);
    default:
      // Shared objects and unknown types are ignored: they never change our state.
      return ok();
  }
}

Result<void> Session::on_control(const Message& m, std::vector<SessionEvent>& events) {
  auto payload = m.payload.span();
  switch (m.type) {
    case msg_type::kWindowAckSize: {
      auto v = parse_u32(payload);
      if (!v) return Error(v.error()).wrap("window acknowledgement size");
      peer_window_ = *v;
      return ok();
    }
    case msg_type::kSetPeerBandwidth: {
      auto pb = parse_peer_bandwidth(payload);
      if (!pb) return Error(pb.error()).wrap("set peer bandwidth");
      // A client answers with its own window of the same size, as the spec asks.
      if (options_.role == SessionRole::Client)
        write_message(csid::kControl, msg_type::kWindowAckSize, 0, kControlStream, build_u32(pb->window));
      return ok();
    }
    case msg_type::kUserControl: {
      auto uc = parse_user_control(payload);
      if (!uc) return Error(uc.error()).wrap("user control");
      switch (uc->event) {
        case UserControlEvent::PingRequest: send_user_control({UserControlEvent::PingResponse, uc->value, 0}); break;
        case UserControlEvent::PingResponse: events.emplace_back(PingResponseEvent{uc->value}); break;
        case UserControlEvent::SetBufferLength: events.emplace_back(SetBufferLengthEvent{uc->value, uc->value2}); break;
        default: events.emplace_back(UserControlMessageEvent{*uc}); break;
      }
      return ok();
    }
    default:
      // Set Chunk Size and Abort were applied by the chunk reader; acknowledgements need nothing.
      return ok();
  }
}

Result<void> Session::on_command(const Message& m, std::vector<SessionEvent>& events) {
  auto cmd = parse_command(m.type, m.payload.span());
  if (!cmd) return Error(cmd.error()).wrap("command message");
  if (options_.role == SessionRole::Server) return on_server_command(*cmd, m.stream_id, events);
  return on_client_command(*cmd, m.stream_id, events);
}

Result<uint32_t> Session::allocate_stream() {
  if (streams_.size() >= options_.max_streams) return Error(Errc::LimitExceeded, "too many streams on one connection");
  // Skip ids still in use after wrap-around (practically never).
  while (next_stream_id_ == 0 || std::find(streams_.begin(), streams_.end(), next_stream_id_) != streams_.end())
    ++next_stream_id_;
  streams_.push_back(next_stream_id_);
  return next_stream_id_++;
}

bool Session::stream_allocated(uint32_t stream_id) const {
  return std::find(streams_.begin(), streams_.end(), stream_id) != streams_.end();
}

namespace {
// Commands that act on a message stream: valid only on an id createStream returned.
bool stream_command(std::string_view name) {
  return name == "publish" || name == "play" || name == "play2" || name == "pause" || name == "pauseRaw" ||
         name == "seek" || name == "receiveAudio" || name == "receiveVideo" || name == "closeStream";
}
}  // namespace

Result<void> Session::on_connect_command(Command& cmd, std::vector<SessionEvent>& events) {
  if (connected_) return Error(Errc::BadState, "second connect on one connection");
  auto c = parse_connect(cmd);
  if (!c) return std::move(c).error();
  connected_ = true;
  connect_ = *c;
  events.emplace_back(ConnectEvent{std::move(*c)});
  return ok();
}

void Session::answer_create_stream(const Command& cmd, std::vector<SessionEvent>& events) {
  auto id = allocate_stream();
  if (!id) {
    amf::Value info = status_info(Status::CallFailed, id.error().context);
    send_command(kControlStream, "_error", cmd.transaction_id, amf::Value::null(), std::span(&info, 1));
    events.emplace_back(CreateStreamRefusedEvent{cmd.transaction_id});
    return;
  }
  amf::Value result = number(*id);
  send_command(kControlStream, "_result", cmd.transaction_id, amf::Value::null(), std::span(&result, 1));
  events.emplace_back(StreamCreatedEvent{cmd.transaction_id, *id});
}

Result<void> Session::on_server_command(Command& cmd, uint32_t stream_id, std::vector<SessionEvent>& events) {
  const std::string& name = cmd.name;
  if (name == "connect") return on_connect_command(cmd, events);
  if (!connected_) return Error(Errc::BadState, "command '" + name + "' before connect");

  // Only ids this session handed out carry streams (a client that pipelines play after its
  // first createStream gets id 1 as usual): otherwise one connection could open a player per
  // id and bypass max_streams.
  if (stream_command(name) && !stream_allocated(stream_id)) {
    const std::string why = "Stream id " + std::to_string(stream_id) + " was not created (call createStream first).";
    if (name == "play" || name == "play2") send_status(stream_id, Status::PlayFailed, why);
    if (name == "publish") send_status(stream_id, Status::PublishBadName, why);
    events.emplace_back(StreamIdRefusedEvent{stream_id, name});
    return ok();
  }

  if (name == "createStream") {
    answer_create_stream(cmd, events);
  } else if (name == "releaseStream" || name == "FCPublish") {
    amf::Value undefined = amf::Value::undefined();
    send_command(kControlStream, "_result", cmd.transaction_id, amf::Value::null(), std::span(&undefined, 1));
  } else if (name == "FCUnpublish") {
    amf::Value undefined = amf::Value::undefined();
    send_command(kControlStream, "_result", cmd.transaction_id, amf::Value::null(), std::span(&undefined, 1));
    std::string stream_name, query;
    split_query(cmd.string_arg(0).value_or(""), stream_name, query);
    events.emplace_back(UnpublishEvent{std::move(stream_name)});
  } else if (name == "publish") {
    // Its media may come before the publish is admitted (a hook's answer): the bound grows now.
    receive_media();
    auto p = parse_publish(cmd);
    if (!p) {
      send_status(stream_id, Status::PublishBadName, p.error().context);
      return ok();
    }
    events.emplace_back(PublishEvent{stream_id, std::move(*p)});
  } else if (name == "play") {
    auto p = parse_play(cmd);
    if (!p) {
      send_status(stream_id, Status::PlayStreamNotFound, p.error().context);
      return ok();
    }
    events.emplace_back(PlayEvent{stream_id, std::move(*p)});
  } else if (name == "pause" || name == "pauseRaw") {
    events.emplace_back(PauseEvent{stream_id, cmd.boolean_arg(0).value_or(true), cmd.number_arg(1).value_or(0)});
  } else if (name == "seek") {
    events.emplace_back(SeekEvent{stream_id, cmd.number_arg(0).value_or(0)});
  } else if (name == "receiveAudio" || name == "receiveVideo") {
    events.emplace_back(ReceiveMediaEvent{stream_id, name == "receiveVideo", cmd.boolean_arg(0).value_or(true)});
  } else if (name == "closeStream") {
    events.emplace_back(CloseStreamEvent{stream_id, false});
  } else if (name == "deleteStream") {
    auto id = static_cast<uint32_t>(cmd.number_arg(0).value_or(stream_id));
    if (!stream_allocated(id)) return ok();  // nothing lives there
    std::erase(streams_, id);
    events.emplace_back(CloseStreamEvent{id, true});
  } else if (name == "getStreamLength") {
    std::string stream_name, query;
    split_query(cmd.string_arg(0).value_or(""), stream_name, query);
    events.emplace_back(GetStreamLengthEvent{cmd.transaction_id, stream_id, std::move(stream_name)});
  } else if (name == "_result" || name == "_error" || name == "_checkbw" || name == "FCSubscribe" ||
             name == "FCUnsubscribe") {
    // Replies to our notifications and bandwidth probes need nothing from us.
  } else {
    events.emplace_back(CommandEvent{stream_id, std::move(cmd)});
  }
  return ok();
}

Result<void> Session::on_client_command(Command& cmd, uint32_t stream_id, std::vector<SessionEvent>& events) {
  if (cmd.name == "_result" || cmd.name == "_error") {
    auto it = std::find(pending_create_stream_.begin(), pending_create_stream_.end(), cmd.transaction_id);
    bool create_stream_reply = it != pending_create_stream_.end();
    if (create_stream_reply) pending_create_stream_.erase(it);
    if (create_stream_reply && cmd.name == "_result") {
      auto id = cmd.number_arg(0);
      if (!id) return Error(Errc::BadCommand, "createStream result without a stream id");
      events.emplace_back(StreamCreatedEvent{cmd.transaction_id, static_cast<uint32_t>(*id)});
      return ok();
    }
    bool error = cmd.name == "_error";
    // The answer to our connect (transaction 1, connect()): the upstream's media may come.
    if (!error && cmd.transaction_id == 1 && stream_id == kControlStream) receive_media();
    events.emplace_back(ResultEvent{stream_id, error, std::move(cmd)});
    return ok();
  }
  if (cmd.name == "onStatus" || cmd.name == "onFCPublish" || cmd.name == "onFCUnpublish") {
    amf::Value info = cmd.args.empty() ? amf::Value::object() : cmd.args[0];
    events.emplace_back(StatusEvent{stream_id, cmd.name, std::move(info)});
    return ok();
  }
  events.emplace_back(CommandEvent{stream_id, std::move(cmd)});
  return ok();
}

Result<void> Session::on_aggregate(const Message& m, std::vector<SessionEvent>& events) {
  ByteReader r(m.payload.span());
  bool first = true;
  uint32_t offset = 0;  // aggregate timestamp minus the first sub-message's
  while (!r.empty()) {
    size_t start = r.position();
    uint8_t type = r.u8();
    uint32_t size = r.u24be();
    uint32_t ts = r.u24be();
    ts |= uint32_t(r.u8()) << 24;
    r.skip(3);  // stream id: the aggregate's own message stream id overrides it
    if (r.failed() || !r.has(size + kAggregateBackPointer))
      return Error(Errc::Malformed, "aggregate sub-message overruns the aggregate at byte " + std::to_string(start));
    if (first) {
      offset = m.timestamp - ts;
      first = false;
    }
    Message sub;
    sub.csid = m.csid;
    sub.type = type;
    sub.timestamp = ts + offset;
    sub.stream_id = m.stream_id;
    sub.payload = m.payload.share(start + kAggregateTagHeader, size);
    r.skip(size + kAggregateBackPointer);
    if (type == msg_type::kAudio || type == msg_type::kVideo || type == msg_type::kDataAmf0)
      events.emplace_back(MediaEvent{std::move(sub)});
  }
  return ok();
}

void Session::write_message(uint32_t chunk_stream, uint8_t type, uint32_t timestamp, uint32_t stream_id,
                            std::span<const uint8_t> payload, std::span<const uint8_t> payload_tail) {
  // A client may queue its first requests before the handshake ends; they go out right after it.
  std::vector<uint8_t>& target = handshake_ ? pending_until_handshake_ : out_;
  writer_.write(chunk_stream, type, timestamp, stream_id, payload, payload_tail, target);
}

uint32_t Session::media_csid(uint8_t type) {
  switch (type) {
    case msg_type::kAudio: return csid::kAudio;
    case msg_type::kVideo: return csid::kVideo;
    default: return csid::kStream;
  }
}

// ---- Both roles ----

void Session::send_set_chunk_size(uint32_t size) {
  write_message(csid::kControl, msg_type::kSetChunkSize, 0, kControlStream, build_u32(size));
  writer_.set_chunk_size(size);
}

void Session::send_user_control(const UserControl& uc) {
  write_message(csid::kControl, msg_type::kUserControl, 0, kControlStream, build_user_control(uc));
}

void Session::send_ping_request(uint32_t timestamp) {
  send_user_control({UserControlEvent::PingRequest, timestamp, 0});
}

void Session::send_command(uint32_t stream_id, std::string_view name, double transaction_id, const amf::Value& object,
                           std::span<const amf::Value> args) {
  auto payload = build_command(name, transaction_id, object, args);
  uint32_t chunk_stream = stream_id == kControlStream ? csid::kCommand : csid::kStream;
  write_message(chunk_stream, msg_type::kCommandAmf0, 0, stream_id, payload);
}

void Session::send_status(uint32_t stream_id, Status code, std::string_view description, amf::Properties extra) {
  amf::Value info = status_info(code, description, std::move(extra));
  send_command(stream_id, "onStatus", 0, amf::Value::null(), std::span(&info, 1));
}

void Session::send_data(uint32_t stream_id, std::string_view name, std::span<const amf::Value> args) {
  write_message(csid::kStream, msg_type::kDataAmf0, 0, stream_id, build_data(name, args));
}

void Session::send_media(uint32_t stream_id, uint8_t type, uint32_t timestamp, std::span<const uint8_t> payload) {
  write_message(media_csid(type), type, timestamp, stream_id, payload);
}

void Session::send_media(uint32_t stream_id, uint8_t type, uint32_t timestamp, std::span<const uint8_t> head,
                         std::span<const uint8_t> body) {
  write_message(media_csid(type), type, timestamp, stream_id, head, body);
}

void Session::write_media_to(std::vector<uint8_t>& out, uint32_t stream_id, uint8_t type, uint32_t timestamp,
                             std::span<const uint8_t> head, std::span<const uint8_t> body) {
  assert(!handshake_);
  writer_.write(media_csid(type), type, timestamp, stream_id, head, body, out);
}

// ---- Server replies ----

void Session::accept_connect(const amf::Properties& extra_server_props) {
  // Admitted, the peer keeps the pre-connect bound until it publishes (receive_media).
  write_message(csid::kControl, msg_type::kWindowAckSize, 0, kControlStream, build_u32(options_.window_ack_size));
  write_message(csid::kControl, msg_type::kSetPeerBandwidth, 0, kControlStream,
                build_peer_bandwidth(options_.window_ack_size, PeerBandwidthLimit::Dynamic));
  send_set_chunk_size(options_.chunk_size);

  amf::Value props = amf::Value::object();
  props.set("fmsVer", str("FMS/3,5,7,7009"));
  props.set("capabilities", number(31));
  props.set("mode", number(1));
  // A client that negotiates Enhanced RTMP v2 capabilities learns which of them the server acts
  // on: Reconnect (docs/protocol.md, "Reconnect requests"). Others get the reply they always got.
  if (connect_.caps_ex) props.set("capsEx", number(kCapsExReconnect));
  for (const auto& [k, v] : extra_server_props) props.set(k, v);
  amf::Value info = status_info(Status::ConnectSuccess, "Connection succeeded.",
                                {{"objectEncoding", number(connect_.object_encoding)}});
  send_command(kControlStream, "_result", connect_.transaction_id, props, std::span(&info, 1));
}

void Session::request_reconnect(std::string_view tc_url, std::string_view description) {
  amf::Properties extra;
  if (!tc_url.empty()) extra.push_back({"tcUrl", str(tc_url)});
  send_status(kControlStream, Status::ConnectReconnectRequest, description, std::move(extra));
}

void Session::reject_connect(std::string_view description) {
  amf::Value info = status_info(Status::ConnectRejected, description);
  send_command(kControlStream, "_error", connect_.transaction_id, amf::Value::null(), std::span(&info, 1));
  closing_ = true;
}

void Session::accept_publish(uint32_t stream_id, std::string_view name) {
  send_user_control({UserControlEvent::StreamBegin, stream_id, 0});
  // FMLE-era encoders and some hardware wait for onFCPublish before sending media.
  amf::Value fc = amf::Value::object();
  fc.set("code", str(status_code(Status::PublishStart)));
  fc.set("description", str(std::string(name)));
  send_command(kControlStream, "onFCPublish", 0, amf::Value::null(), std::span(&fc, 1));
  send_status(stream_id, Status::PublishStart, std::string(name) + " is now published.", {{"details", str(name)}});
}

void Session::reject_publish(uint32_t stream_id, Status code, std::string_view description) {
  assert(status_level(code) == StatusLevel::Error);
  send_status(stream_id, code, description);
}

void Session::start_play(uint32_t stream_id, std::string_view name, bool reset, bool recorded) {
  if (recorded) send_user_control({UserControlEvent::StreamIsRecorded, stream_id, 0});
  send_user_control({UserControlEvent::StreamBegin, stream_id, 0});
  if (reset)
    send_status(stream_id, Status::PlayReset, "Playing and resetting " + std::string(name) + ".",
                {{"details", str(name)}});
  send_status(stream_id, Status::PlayStart, "Started playing " + std::string(name) + ".", {{"details", str(name)}});
  amf::Value access[] = {amf::Value::boolean(true), amf::Value::boolean(true)};
  send_data(stream_id, "|RtmpSampleAccess", access);
}

void Session::reply_stream_length(double transaction_id, double seconds) {
  amf::Value length = number(seconds);
  send_command(kControlStream, "_result", transaction_id, amf::Value::null(), std::span(&length, 1));
}

void Session::reply_unpublish(uint32_t stream_id, std::string_view name) {
  amf::Value fc = amf::Value::object();
  fc.set("code", str(status_code(Status::UnpublishSuccess)));
  fc.set("description", str(std::string(name)));
  send_command(kControlStream, "onFCUnpublish", 0, amf::Value::null(), std::span(&fc, 1));
  send_status(stream_id, Status::UnpublishSuccess, std::string(name) + " is now unpublished.",
              {{"details", str(name)}});
}

void Session::notify_pause(uint32_t stream_id, std::string_view description, amf::Properties extra) {
  send_user_control({UserControlEvent::StreamEof, stream_id, 0});
  send_status(stream_id, Status::PauseNotify, description, std::move(extra));
}

void Session::notify_unpause(uint32_t stream_id, std::string_view description, amf::Properties extra) {
  send_user_control({UserControlEvent::StreamBegin, stream_id, 0});
  send_status(stream_id, Status::UnpauseNotify, description, std::move(extra));
}

void Session::notify_seek(uint32_t stream_id, std::string_view name, const amf::Properties& extra) {
  send_status(stream_id, Status::SeekNotify, "Seeking " + std::string(name) + ".", extra);
  send_status(stream_id, Status::PlayStart, "Started playing " + std::string(name) + ".", extra);
}

void Session::send_play_status(uint32_t stream_id, Status code, std::string_view description, amf::Properties extra) {
  amf::Value info = status_info(code, description, std::move(extra));
  send_data(stream_id, "onPlayStatus", std::span(&info, 1));
}

// ---- Client requests ----

void Session::connect(std::string_view app, std::string_view tc_url, const amf::Properties& extra) {
  send_set_chunk_size(options_.chunk_size);
  amf::Value obj = amf::Value::object();
  obj.set("app", str(app));
  obj.set("flashVer", str("LNX 9,0,124,2"));
  obj.set("tcUrl", str(tc_url));
  obj.set("fpad", amf::Value::boolean(false));
  obj.set("capabilities", number(15));
  obj.set("audioCodecs", number(4071));
  obj.set("videoCodecs", number(252));
  obj.set("videoFunction", number(1));
  for (const auto& [k, v] : extra) obj.set(k, v);
  connect_.app = std::string(app);
  connect_.tc_url = std::string(tc_url);
  connected_ = true;
  send_command(kControlStream, "connect", 1, obj);
}

double Session::create_stream() {
  double txn = next_transaction_id_++;
  pending_create_stream_.push_back(txn);
  send_command(kControlStream, "createStream", txn, amf::Value::null());
  return txn;
}

void Session::publish(uint32_t stream_id, std::string_view name, std::string_view type) {
  amf::Value args[] = {str(name), str(type)};
  send_command(stream_id, "publish", 0, amf::Value::null(), args);
}

void Session::play(uint32_t stream_id, std::string_view name, double start, double duration, bool reset) {
  amf::Value args[] = {str(name), number(start), number(duration), amf::Value::boolean(reset)};
  send_command(stream_id, "play", 0, amf::Value::null(), args);
}

void Session::pause(uint32_t stream_id, bool pause, double position_ms) {
  amf::Value args[] = {amf::Value::boolean(pause), number(position_ms)};
  send_command(stream_id, "pause", 0, amf::Value::null(), args);
}

void Session::seek(uint32_t stream_id, double position_ms) {
  amf::Value arg = number(position_ms);
  send_command(stream_id, "seek", 0, amf::Value::null(), std::span(&arg, 1));
}

void Session::delete_stream(uint32_t stream_id) {
  amf::Value arg = number(stream_id);
  send_command(kControlStream, "deleteStream", 0, amf::Value::null(), std::span(&arg, 1));
}

void Session::set_buffer_length(uint32_t stream_id, uint32_t ms) {
  send_user_control({UserControlEvent::SetBufferLength, stream_id, ms});
}

}  // namespace sluice::protocol
