// A client session and a server session wired back to back in memory.
#include <doctest/doctest.h>

#include <random>

#include "base/byte_io.hpp"
#include "protocol/session.hpp"

using namespace sluice;
using namespace sluice::protocol;

namespace {

// Moves everything `from` has queued into `to`, split into pieces of `step` bytes (0 = at once).
Result<void> pump(Session& from, Session& to, std::vector<SessionEvent>& events, size_t step = 0) {
  std::vector<uint8_t> bytes;
  from.drain_output(bytes);
  if (step == 0) return to.feed(bytes, events);
  for (size_t i = 0; i < bytes.size(); i += step) {
    auto r = to.feed(std::span(bytes).subspan(i, std::min(step, bytes.size() - i)), events);
    if (!r) return r;
  }
  return ok();
}

template <typename T>
std::vector<const T*> only(const std::vector<SessionEvent>& events) {
  std::vector<const T*> out;
  for (const auto& e : events)
    if (auto* p = std::get_if<T>(&e)) out.push_back(p);
  return out;
}

struct Pair {
  Session client{options_for(SessionRole::Client)};
  Session server{options_for(SessionRole::Server)};
  std::vector<SessionEvent> client_events, server_events;

  void exchange(size_t step = 0) {
    for (int i = 0; i < 4; ++i) {
      REQUIRE(pump(client, server, server_events, step).ok());
      REQUIRE(pump(server, client, client_events, step).ok());
    }
  }

  void connect(std::string app = "live") {
    client.connect(app, "rtmp://127.0.0.1/" + app);
    exchange();
    auto c = only<ConnectEvent>(server_events);
    REQUIRE(c.size() == 1);
    CHECK(c[0]->connect.app == app);
    server.accept_connect();
    exchange();
  }
};

}  // namespace

TEST_CASE("handshake, connect, createStream and publish end to end") {
  for (size_t step : {size_t{0}, size_t{1}, size_t{7}, size_t{1000}}) {
    CAPTURE(step);
    Pair p;
    p.client.connect("live?x=1", "rtmp://127.0.0.1/live?x=1");
    p.exchange(step);
    CHECK(p.client.handshake_done());
    CHECK(p.server.handshake_done());
    CHECK(only<HandshakeDoneEvent>(p.server_events).size() == 1);
    auto connects = only<ConnectEvent>(p.server_events);
    REQUIRE(connects.size() == 1);
    CHECK(connects[0]->connect.app == "live");
    CHECK(connects[0]->connect.app_query == "x=1");
    CHECK(connects[0]->connect.tc_url == "rtmp://127.0.0.1/live?x=1");

    p.server.accept_connect();
    p.exchange(step);
    auto results = only<ResultEvent>(p.client_events);
    REQUIRE(results.size() == 1);
    CHECK_FALSE(results[0]->error);
    CHECK(results[0]->command.transaction_id == 1);
    REQUIRE(results[0]->command.args.size() == 1);
    CHECK(results[0]->command.args[0].get_string("code") == "NetConnection.Connect.Success");

    double txn = p.client.create_stream();
    p.exchange(step);
    auto created_server = only<StreamCreatedEvent>(p.server_events);
    auto created_client = only<StreamCreatedEvent>(p.client_events);
    REQUIRE(created_server.size() == 1);
    REQUIRE(created_client.size() == 1);
    CHECK(created_client[0]->transaction_id == txn);
    uint32_t id = created_client[0]->stream_id;
    CHECK(id == created_server[0]->stream_id);
    CHECK(id >= 1);

    p.client.publish(id, "cam?token=abc");
    p.exchange(step);
    auto pubs = only<PublishEvent>(p.server_events);
    REQUIRE(pubs.size() == 1);
    CHECK(pubs[0]->stream_id == id);
    CHECK(pubs[0]->publish.name == "cam");
    CHECK(pubs[0]->publish.query == "token=abc");
    CHECK(pubs[0]->publish.type == "live");

    p.server.accept_publish(id, "cam");
    p.exchange(step);
    auto statuses = only<StatusEvent>(p.client_events);
    REQUIRE(statuses.size() == 2);
    CHECK(statuses[0]->name == "onFCPublish");
    CHECK(statuses[1]->code() == "NetStream.Publish.Start");
    CHECK(statuses[1]->stream_id == id);

    // Media of several sizes (beyond the 4096 chunk size) arrives intact.
    std::vector<uint8_t> big(10000);
    for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<uint8_t>(i * 7);
    p.client.send_media(id, msg_type::kVideo, 40, big);
    p.client.send_media(id, msg_type::kAudio, 41, std::span(big).subspan(0, 300));
    p.exchange(step);
    auto media = only<MediaEvent>(p.server_events);
    REQUIRE(media.size() == 2);
    CHECK(media[0]->message.type == msg_type::kVideo);
    CHECK(media[0]->message.timestamp == 40);
    CHECK(media[0]->message.stream_id == id);
    CHECK(std::equal(big.begin(), big.end(), media[0]->message.payload.data(),
                     media[0]->message.payload.data() + media[0]->message.payload.size()));
    CHECK(media[1]->message.payload.size() == 300);
  }
}

TEST_CASE("play replies come in the order players expect") {
  Pair p;
  p.connect();
  p.client.create_stream();
  p.exchange();
  uint32_t id = only<StreamCreatedEvent>(p.client_events).at(0)->stream_id;
  p.client.play(id, "cam", -1000, -1, true);
  p.client.set_buffer_length(id, 3000);
  p.exchange();
  auto plays = only<PlayEvent>(p.server_events);
  REQUIRE(plays.size() == 1);
  CHECK(plays[0]->play.name == "cam");
  CHECK(plays[0]->play.start == -1000);
  auto buffers = only<SetBufferLengthEvent>(p.server_events);
  REQUIRE(buffers.size() == 1);
  CHECK(buffers[0]->buffer_ms == 3000);

  p.client_events.clear();
  p.server.start_play(id, "cam", true, false);
  p.exchange();
  std::vector<std::string> seen;
  for (const auto& e : p.client_events) {
    if (auto* uc = std::get_if<UserControlMessageEvent>(&e)) {
      if (uc->control.event == UserControlEvent::StreamBegin) seen.push_back("StreamBegin");
    } else if (auto* s = std::get_if<StatusEvent>(&e)) {
      seen.push_back(s->code());
    } else if (auto* m = std::get_if<MediaEvent>(&e)) {
      seen.push_back("data");
      CHECK(m->message.type == msg_type::kDataAmf0);
    }
  }
  CHECK(seen == std::vector<std::string>{"StreamBegin", "NetStream.Play.Reset", "NetStream.Play.Start", "data"});
}

TEST_CASE("unknown app is rejected and the session asks to close") {
  Pair p;
  p.client.connect("nope", "rtmp://127.0.0.1/nope");
  p.exchange();
  p.server.reject_connect("Unknown application");
  CHECK(p.server.closing());
  p.exchange();
  auto results = only<ResultEvent>(p.client_events);
  REQUIRE(results.size() == 1);
  CHECK(results[0]->error);
  CHECK(results[0]->command.args.at(0).get_string("code") == "NetConnection.Connect.Rejected");
}

TEST_CASE("a command before connect fails the session") {
  Pair p;
  p.client.create_stream();
  p.client.connect("live", "rtmp://x/live");  // createStream went first
  std::vector<uint8_t> bytes;
  for (int i = 0; i < 3; ++i) {
    p.client.drain_output(bytes);
    auto r = p.server.feed(bytes, p.server_events);
    bytes.clear();
    if (!r) {
      CHECK(r.error().code == Errc::BadState);
      CHECK(p.server.failed());
      return;
    }
    REQUIRE(pump(p.server, p.client, p.client_events).ok());
  }
  FAIL("server accepted createStream before connect");
}

TEST_CASE("ping requests are answered by the peer session") {
  Pair p;
  p.connect();
  p.server.send_ping_request(12345);
  p.exchange();
  auto pongs = only<PingResponseEvent>(p.server_events);
  REQUIRE(pongs.size() == 1);
  CHECK(pongs[0]->timestamp == 12345);
}

TEST_CASE("acknowledgements follow the announced window") {
  SessionOptions so = options_for(SessionRole::Server);
  Session server(so);
  SessionOptions co = options_for(SessionRole::Client);
  co.window_ack_size = 100000;
  Session client(co);
  std::vector<SessionEvent> se, ce;
  client.connect("live", "rtmp://x/live");
  for (int i = 0; i < 3; ++i) {
    REQUIRE(pump(client, server, se).ok());
    REQUIRE(pump(server, client, ce).ok());
  }
  server.accept_connect();  // announces 2.5 MB; the client acks at that window
  REQUIRE(pump(server, client, ce).ok());
  std::vector<uint8_t> payload(100000, 0x42);
  client.create_stream();
  REQUIRE(pump(client, server, se).ok());
  REQUIRE(pump(server, client, ce).ok());
  uint32_t id = only<StreamCreatedEvent>(ce).at(0)->stream_id;
  for (int i = 0; i < 30; ++i) server.send_media(id, msg_type::kVideo, i * 40, payload);
  std::vector<uint8_t> bytes;
  server.drain_output(bytes);
  REQUIRE(client.feed(bytes, ce).ok());
  // The client acknowledged: its output holds an Acknowledgement whose sequence number counts the bytes.
  std::vector<uint8_t> out;
  client.drain_output(out);
  // One Acknowledgement (fmt 1 on csid 2 after the earlier control messages: 1 + 7 + 4 bytes).
  REQUIRE(out.size() == 12);
  CHECK(out[0] == 0x42);
  CHECK(out[7] == msg_type::kAcknowledgement);
  uint32_t sequence = load_u32be(&out[8]);
  CHECK(sequence >= 2'500'000);
  CHECK(sequence <= client.bytes_received());
}

TEST_CASE("aggregate messages are split into their sub-messages") {
  Pair p;
  p.connect();
  p.client.create_stream();
  p.exchange();
  uint32_t id = only<StreamCreatedEvent>(p.client_events).at(0)->stream_id;
  std::vector<uint8_t> agg;
  ByteWriter w(agg);
  auto sub = [&](uint8_t type, uint32_t ts, std::vector<uint8_t> data) {
    w.u8(type);
    w.u24be(static_cast<uint32_t>(data.size()));
    w.u24be(ts & 0xFFFFFF);
    w.u8(static_cast<uint8_t>(ts >> 24));
    w.u24be(0);
    w.bytes(data);
    w.u32be(static_cast<uint32_t>(11 + data.size()));
  };
  sub(msg_type::kAudio, 1000, {0xAF, 0x01, 0x11});
  sub(msg_type::kVideo, 1020, {0x27, 0x01, 0, 0, 0, 0x55});
  p.client.send_media(id, msg_type::kAggregate, 5000, agg);
  p.exchange();
  auto media = only<MediaEvent>(p.server_events);
  REQUIRE(media.size() == 2);
  CHECK(media[0]->message.type == msg_type::kAudio);
  CHECK(media[0]->message.timestamp == 5000);
  CHECK(media[1]->message.type == msg_type::kVideo);
  CHECK(media[1]->message.timestamp == 5020);
  CHECK(media[1]->message.payload.size() == 6);
  CHECK(media[1]->message.stream_id == id);

  // A sub-message that overruns the aggregate fails the session.
  std::vector<uint8_t> truncated(agg.begin(), agg.begin() + static_cast<std::ptrdiff_t>(agg.size() - 3));
  p.client.send_media(id, msg_type::kAggregate, 6000, truncated);
  std::vector<uint8_t> bytes;
  p.client.drain_output(bytes);
  CHECK_FALSE(p.server.feed(bytes, p.server_events).ok());
  CHECK(p.server.failed());
}

TEST_CASE("createStream beyond the per-connection limit gets _error") {
  Session client(options_for(SessionRole::Client));
  SessionOptions so = options_for(SessionRole::Server);
  so.max_streams = 2;
  Session server(so);
  std::vector<SessionEvent> ce, se;
  client.connect("live", "rtmp://x/live");
  for (int i = 0; i < 3; ++i) {
    REQUIRE(pump(client, server, se).ok());
    REQUIRE(pump(server, client, ce).ok());
  }
  server.accept_connect();
  for (int i = 0; i < 3; ++i) client.create_stream();
  for (int i = 0; i < 3; ++i) {
    REQUIRE(pump(client, server, se).ok());
    REQUIRE(pump(server, client, ce).ok());
  }
  CHECK(only<StreamCreatedEvent>(ce).size() == 2);
  auto errors = only<ResultEvent>(ce);
  bool saw_error = false;
  for (auto* r : errors) saw_error |= r->error;
  CHECK(saw_error);
}

TEST_CASE("a message longer than the limit fails the session with a reason") {
  Session client(options_for(SessionRole::Client));
  SessionOptions so = options_for(SessionRole::Server);
  so.chunk_limits.max_message_size = 8u << 20;
  Session server(so);
  std::vector<SessionEvent> ev;
  for (int i = 0; i < 3; ++i) {
    REQUIRE(pump(client, server, ev).ok());
    REQUIRE(pump(server, client, ev).ok());
  }
  REQUIRE(server.handshake_done());
  // fmt 0 on csid 3 declaring a (16 MiB - 1) message.
  std::vector<uint8_t> bad = {0x03, 0, 0, 0, 0xFF, 0xFF, 0xFF, 20, 0, 0, 0, 0};
  auto r = server.feed(bad, ev);
  CHECK_FALSE(r.ok());
  CHECK(r.error().code == Errc::LimitExceeded);
}

TEST_CASE("stream commands on ids createStream never returned are refused and answered") {
  Pair p;
  p.connect();
  // Pipelined as FFmpeg and Flash do: createStream, then play on id 1 before the reply.
  p.client.create_stream();
  p.client.play(1, "cam");
  // Ids nobody created: a player per id would bypass max_streams.
  for (uint32_t id : {0u, 2u, 7u, 300u}) p.client.play(id, "cam");
  p.client.publish(9, "other");
  p.client.seek(5, 1000);
  p.exchange();
  auto plays = only<PlayEvent>(p.server_events);
  REQUIRE(plays.size() == 1);
  CHECK(plays[0]->stream_id == 1);
  CHECK(only<PublishEvent>(p.server_events).empty());
  CHECK(only<SeekEvent>(p.server_events).empty());
  auto refused = only<StreamIdRefusedEvent>(p.server_events);
  REQUIRE(refused.size() == 6);
  CHECK(refused[0]->stream_id == 0);
  CHECK(refused[4]->command == "publish");
  // The client was told, on the id it used.
  int failed = 0, bad_name = 0;
  for (auto* s : only<StatusEvent>(p.client_events)) {
    failed += s->code() == "NetStream.Play.Failed";
    bad_name += s->code() == "NetStream.Publish.BadName" && s->stream_id == 9;
  }
  CHECK(failed == 4);
  CHECK(bad_name == 1);
}

TEST_CASE("a deleted stream id is no longer valid") {
  Pair p;
  p.connect();
  p.client.create_stream();
  p.exchange();
  p.client.delete_stream(1);
  p.client.play(1, "cam");
  p.exchange();
  CHECK(only<CloseStreamEvent>(p.server_events).size() == 1);
  CHECK(only<PlayEvent>(p.server_events).empty());
  CHECK(only<StreamIdRefusedEvent>(p.server_events).size() == 1);
}

TEST_CASE("before connect a peer may send only small messages; a publisher may send large ones") {
  SessionOptions so = options_for(SessionRole::Server);
  so.pre_connect_max_message_size = 64 * 1024;
  so.chunk_limits.max_message_size = 8u << 20;
  {
    Session client(options_for(SessionRole::Client));
    Session server(so);
    std::vector<SessionEvent> ev;
    for (int i = 0; i < 3; ++i) {
      REQUIRE(pump(client, server, ev).ok());
      REQUIRE(pump(server, client, ev).ok());
    }
    // fmt 0 on csid 3 declaring a 1 MiB message: fine later, too big before connect.
    std::vector<uint8_t> big = {0x03, 0, 0, 0, 0x10, 0x00, 0x00, 20, 0, 0, 0, 0};
    auto r = server.feed(big, ev);
    CHECK_FALSE(r.ok());
    CHECK(r.error().code == Errc::LimitExceeded);
  }
  std::vector<uint8_t> big = {0x03, 0, 0, 0, 0x10, 0x00, 0x00, 20, 0, 0, 0, 0};
  {
    // Admitted, a connection that has not published (a player) keeps the small bound.
    Pair p;
    p.server = Session(so);
    p.connect();
    CHECK(p.server.partial_bound() == 128 * 1024);
    auto r = p.server.feed(big, p.server_events);
    CHECK_FALSE(r.ok());
    CHECK(r.error().code == Errc::LimitExceeded);
    CHECK(r.error().message().find("partial-message bound of a connection that has not published") !=
          std::string::npos);
  }
  Pair p;
  p.server = Session(so);
  p.connect();
  p.client.create_stream();
  p.exchange();
  p.client.publish(1, "cam");
  p.exchange();  // the bound grows with the publish command, before any answer to it
  CHECK(p.server.partial_bound() == so.media_partial_floor);
  CHECK(p.server.feed(big, p.server_events).ok());
}

TEST_CASE("a publisher's partial messages may hold 4 times its largest media message, at least the floor") {
  SessionOptions so = options_for(SessionRole::Server);
  Pair p;
  p.server = Session(so);
  p.connect();
  p.client.create_stream();
  p.exchange();
  p.client.publish(1, "cam");
  p.exchange();
  REQUIRE(p.server.partial_bound() == 2u << 20);
  // A 1.5 MiB keyframe fits the floor; afterwards the bound is 6 MiB.
  std::vector<uint8_t> frame(1536 * 1024, 0x17);
  p.client.send_media(1, 9, 0, frame);
  p.exchange();
  REQUIRE(only<MediaEvent>(p.server_events).size() == 1);
  CHECK(p.server.partial_bound() == 6u << 20);
  // A 7 MiB message is still too big: declared past the bound, it fails at its header.
  std::vector<uint8_t> huge = {0x06, 0, 0, 0, 0x70, 0x00, 0x00, 9, 1, 0, 0, 0};
  auto r = p.server.feed(huge, p.server_events);
  CHECK_FALSE(r.ok());
  CHECK(r.error().code == Errc::LimitExceeded);
  CHECK(r.error().message().find("4 times its largest message so far, at least 2048 KiB") != std::string::npos);
}

TEST_CASE("a client takes only small messages from its server until the answer to its connect") {
  SessionOptions co = options_for(SessionRole::Client);
  co.chunk_limits.max_message_size = 8u << 20;
  // fmt 0 on csid 3 declaring a 1 MiB message (an upstream origin's, before it answered connect).
  const std::vector<uint8_t> big = {0x03, 0, 0, 0, 0x10, 0x00, 0x00, 20, 0, 0, 0, 0};
  {
    Session client(co);
    Session server(options_for(SessionRole::Server));
    std::vector<SessionEvent> ev;
    for (int i = 0; i < 3; ++i) {
      REQUIRE(pump(client, server, ev).ok());
      REQUIRE(pump(server, client, ev).ok());
    }
    client.connect("live", "rtmp://h/live");
    auto r = client.feed(big, ev);
    CHECK_FALSE(r.ok());
    CHECK(r.error().code == Errc::LimitExceeded);
  }
  Pair p;
  p.client = Session(co);
  p.connect();
  REQUIRE_FALSE(only<ResultEvent>(p.client_events).empty());
  CHECK(p.client.feed(big, p.client_events).ok());
}
