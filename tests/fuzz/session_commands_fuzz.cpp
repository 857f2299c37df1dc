// Command-order fuzzing: a real client Session issues commands in the order and on the message
// stream ids the input picks (createStream, play, publish, pause, seek, receiveVideo,
// closeStream, deleteStream, getStreamLength, FCUnpublish, media), a server Session answers them
// as the server does. Properties: no crash; play and publish reach the application only on ids
// the server handed out and still holds; never more than max_streams ids at once; the server's
// output per command stays bounded (no reply amplification).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "protocol/session.hpp"

using namespace sluice;
using namespace sluice::protocol;

namespace {

constexpr uint32_t kMaxStreams = 4;
constexpr size_t kMaxOutputPerCommand = 4096;

void move_bytes(Session& from, Session& to, std::vector<SessionEvent>& events) {
  std::vector<uint8_t> bytes;
  from.drain_output(bytes);
  (void)to.feed(bytes, events);
}

struct Model {
  std::vector<uint32_t> held;  // ids the server handed out and not deleted
  bool holds(uint32_t id) const { return std::find(held.begin(), held.end(), id) != held.end(); }
};

void answer(Session& server, std::vector<SessionEvent>& events, Model& m) {
  for (auto& ev : events) {
    if (std::get_if<ConnectEvent>(&ev)) {
      server.accept_connect();
    } else if (auto* c = std::get_if<StreamCreatedEvent>(&ev)) {
      m.held.push_back(c->stream_id);
      if (m.held.size() > kMaxStreams) __builtin_trap();
    } else if (auto* p = std::get_if<PublishEvent>(&ev)) {
      if (!m.holds(p->stream_id)) __builtin_trap();
      server.accept_publish(p->stream_id, p->publish.name);
    } else if (auto* p = std::get_if<PlayEvent>(&ev)) {
      if (!m.holds(p->stream_id)) __builtin_trap();
      server.start_play(p->stream_id, p->play.name, p->play.reset, false);
    } else if (auto* s = std::get_if<SeekEvent>(&ev)) {
      if (!m.holds(s->stream_id)) __builtin_trap();
      server.send_status(s->stream_id, Status::SeekFailed, "Live streams cannot seek.");
    } else if (auto* d = std::get_if<CloseStreamEvent>(&ev)) {
      if (d->deleted) std::erase(m.held, d->stream_id);
    } else if (auto* g = std::get_if<GetStreamLengthEvent>(&ev)) {
      server.reply_stream_length(g->transaction_id, 0);
    } else if (auto* u = std::get_if<UnpublishEvent>(&ev)) {
      server.reply_unpublish(1, u->name);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  SessionOptions so = options_for(SessionRole::Server);
  so.max_streams = kMaxStreams;
  Session server(so);
  Session client(options_for(SessionRole::Client));
  std::vector<SessionEvent> se, ce;
  for (int i = 0; i < 3; ++i) {
    move_bytes(client, server, se);
    move_bytes(server, client, ce);
  }
  if (!server.handshake_done()) __builtin_trap();
  Model model;
  client.connect("live", "rtmp://127.0.0.1/live");
  move_bytes(client, server, se);
  answer(server, se, model);
  move_bytes(server, client, ce);

  // Each command takes three bytes: what, on which stream id, one argument.
  for (size_t i = 0; i + 3 <= size; i += 3) {
    const uint8_t op = data[i] % 12;
    const uint32_t id = data[i + 1] % 8;  // mostly ids nobody created, sometimes real ones
    const uint8_t arg = data[i + 2];
    const std::string name = "s" + std::to_string(arg % 5);
    switch (op) {
      case 0: client.create_stream(); break;
      case 1: client.play(id, name, arg & 1 ? -2000 : arg * 10.0, -1, (arg & 2) != 0); break;
      case 2: client.publish(id, name); break;
      case 3: client.pause(id, (arg & 1) != 0, arg * 100.0); break;
      case 4: client.seek(id, arg * 100.0); break;
      case 5: client.delete_stream(id); break;
      case 6: client.send_command(id, "closeStream", 0, amf::Value::null()); break;
      case 7: {
        amf::Value flag = amf::Value::boolean((arg & 1) != 0);
        client.send_command(id, arg & 2 ? "receiveVideo" : "receiveAudio", 0, amf::Value::null(), std::span(&flag, 1));
        break;
      }
      case 8: {
        amf::Value n = amf::Value::string(name);
        client.send_command(0, "getStreamLength", 3, amf::Value::null(), std::span(&n, 1));
        break;
      }
      case 9: {
        amf::Value n = amf::Value::string(name);
        client.send_command(0, "FCUnpublish", 4, amf::Value::null(), std::span(&n, 1));
        break;
      }
      case 10: client.set_buffer_length(id, arg * 100u); break;
      default: {
        const uint8_t frame[] = {0x17, 0x01, 0, 0, 0, arg};
        client.send_media(id, 9, arg * 40u, frame);
        break;
      }
    }
    se.clear();
    move_bytes(client, server, se);
    answer(server, se, model);
    if (server.output_size() > kMaxOutputPerCommand) __builtin_trap();
    ce.clear();
    move_bytes(server, client, ce);
    if (server.failed()) break;
  }
  return 0;
}
