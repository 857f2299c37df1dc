// Whole-session fuzzing (nghttp2's fuzz_target idea): a server Session after a real handshake is
// fed arbitrary chunk-stream bytes and answers every event the way the server does (accept
// connect, publish, play, stream length). No input may crash it, and its output must stay bounded.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "protocol/session.hpp"

using namespace sluice;
using namespace sluice::protocol;

namespace {

void complete_handshake(Session& client, Session& server) {
  std::vector<SessionEvent> events;
  std::vector<uint8_t> bytes;
  for (int i = 0; i < 3; ++i) {
    bytes.clear();
    client.drain_output(bytes);
    (void)server.feed(bytes, events);
    bytes.clear();
    server.drain_output(bytes);
    (void)client.feed(bytes, events);
  }
}

void answer(Session& server, std::vector<SessionEvent>& events) {
  for (auto& ev : events) {
    if (std::get_if<ConnectEvent>(&ev)) {
      server.accept_connect();
    } else if (auto* p = std::get_if<PublishEvent>(&ev)) {
      server.accept_publish(p->stream_id, p->publish.name);
    } else if (auto* p = std::get_if<PlayEvent>(&ev)) {
      server.start_play(p->stream_id, p->play.name, p->play.reset, false);
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
  so.chunk_limits.max_message_size = 1 << 20;
  so.chunk_limits.max_buffered_bytes = 4 << 20;
  Session server(so);
  Session client(options_for(SessionRole::Client));
  complete_handshake(client, server);
  if (!server.handshake_done()) __builtin_trap();

  // The first byte picks the feed granularity, so splits are explored too.
  size_t step = size == 0 ? 1 : (data[0] % 16) + 1;
  std::vector<SessionEvent> events;
  std::vector<uint8_t> out;
  for (size_t off = 1; off < size; off += step) {
    size_t n = off + step <= size ? step : size - off;
    events.clear();
    auto r = server.feed({data + off, n}, events);
    answer(server, events);
    out.clear();
    server.drain_output(out);
    if (!r) break;
  }
  return 0;
}
