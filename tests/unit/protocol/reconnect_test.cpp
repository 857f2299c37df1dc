// Enhanced RTMP reconnect (docs/protocol.md, "Reconnect requests"): capsEx read from the connect
// command object (protocol/commands.hpp), the server's capsEx in its _result, and the
// NetConnection.Connect.ReconnectRequest onStatus (protocol/session.hpp) as a client receives it.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "protocol/commands.hpp"
#include "protocol/session.hpp"

using namespace sluice;
using namespace sluice::protocol;

namespace {

Command connect_with(amf::Properties extra) {
  Command cmd;
  cmd.name = "connect";
  cmd.transaction_id = 1;
  cmd.command_object = amf::Value::object();
  cmd.command_object.set("app", amf::Value::string("live"));
  cmd.command_object.set("tcUrl", amf::Value::string("rtmp://lb.example/live"));
  for (auto& [k, v] : extra) cmd.command_object.set(k, std::move(v));
  return cmd;
}

ConnectCommand parsed(amf::Properties extra) {
  auto c = parse_connect(connect_with(std::move(extra)));
  REQUIRE(c.ok());
  return *c;
}

template <typename T>
std::vector<const T*> only(const std::vector<SessionEvent>& events) {
  std::vector<const T*> out;
  for (const auto& e : events)
    if (auto* p = std::get_if<T>(&e)) out.push_back(p);
  return out;
}

// A client and a server session back to back, connected; the client's connect carries `extra`.
struct Connected {
  Session client{options_for(SessionRole::Client)};
  Session server{options_for(SessionRole::Server)};
  std::vector<SessionEvent> client_events, server_events;

  explicit Connected(const amf::Properties& extra) {
    client.connect("live", "rtmp://lb.example:1935/live?token=abc", extra);
    exchange();
    REQUIRE(only<ConnectEvent>(server_events).size() == 1);
    server.accept_connect();
    exchange();
  }

  void exchange() {
    for (int i = 0; i < 4; ++i) {
      std::vector<uint8_t> bytes;
      client.drain_output(bytes);
      REQUIRE(server.feed(bytes, server_events).ok());
      bytes.clear();
      server.drain_output(bytes);
      REQUIRE(client.feed(bytes, client_events).ok());
    }
  }

  // The server's capsEx in its connect _result, or nullptr.
  const amf::Value* server_caps() const {
    auto results = only<ResultEvent>(client_events);
    REQUIRE(results.size() == 1);
    return results[0]->command.command_object.find("capsEx");
  }
};

}  // namespace

TEST_CASE("capsEx in connect: absent, the Reconnect bit, other bits, odd numbers and types") {
  ConnectCommand none = parsed({});
  CHECK_FALSE(none.caps_ex.has_value());
  CHECK_FALSE(none.can_reconnect());

  ConnectCommand all = parsed({{"capsEx", amf::Value::number(15)}});
  REQUIRE(all.caps_ex.has_value());
  CHECK(*all.caps_ex == 15);
  CHECK(all.can_reconnect());

  ConnectCommand reconnect_only = parsed({{"capsEx", amf::Value::number(kCapsExReconnect)}});
  CHECK(reconnect_only.can_reconnect());

  // Multitrack | ModEx | TimestampNanoOffset, but not Reconnect.
  ConnectCommand others = parsed({{"capsEx", amf::Value::number(14)}});
  REQUIRE(others.caps_ex.has_value());
  CHECK(*others.caps_ex == 14);
  CHECK_FALSE(others.can_reconnect());

  CHECK(*parsed({{"capsEx", amf::Value::number(0)}}).caps_ex == 0);
  CHECK_FALSE(parsed({{"capsEx", amf::Value::number(0)}}).can_reconnect());
  CHECK_FALSE(parsed({{"capsEx", amf::Value::number(-1)}}).can_reconnect());
  CHECK_FALSE(parsed({{"capsEx", amf::Value::number(std::nan(""))}}).can_reconnect());
  CHECK(parsed({{"capsEx", amf::Value::number(1.5)}}).can_reconnect());  // the whole part: 1
  CHECK(*parsed({{"capsEx", amf::Value::number(1e300)}}).caps_ex == 0xFFFFFFFFu);
  CHECK(*parsed({{"capsEx", amf::Value::number(std::numeric_limits<double>::infinity())}}).caps_ex == 0xFFFFFFFFu);
  // AMF3 clients send integers.
  CHECK(parsed({{"capsEx", amf::Value::integer(1)}}).can_reconnect());
  // Not a number: as if absent.
  ConnectCommand text = parsed({{"capsEx", amf::Value::string("1")}});
  CHECK_FALSE(text.caps_ex.has_value());
  CHECK_FALSE(text.can_reconnect());
  CHECK_FALSE(parsed({{"capsEx", amf::Value::boolean(true)}}).can_reconnect());
}

TEST_CASE("the server names its capsEx (Reconnect) only to a client that sent one") {
  Connected plain({});
  CHECK(plain.server_caps() == nullptr);
  CHECK_FALSE(plain.server.connect_info().can_reconnect());

  Connected enhanced({{"capsEx", amf::Value::number(kCapsExReconnect | kCapsExMultitrack)}});
  const amf::Value* caps = enhanced.server_caps();
  REQUIRE(caps != nullptr);
  CHECK(caps->as_number() == kCapsExReconnect);
  CHECK(enhanced.server.connect_info().can_reconnect());

  Connected zero({{"capsEx", amf::Value::number(0)}});
  REQUIRE(zero.server_caps() != nullptr);
  CHECK_FALSE(zero.server.connect_info().can_reconnect());
}

TEST_CASE("a ReconnectRequest is an onStatus on stream 0 with level, code, description and tcUrl") {
  Connected c({{"capsEx", amf::Value::number(kCapsExReconnect)}});
  c.client_events.clear();
  c.server.request_reconnect(c.server.connect_info().tc_url, "Shutting down.");
  c.exchange();
  auto statuses = only<StatusEvent>(c.client_events);
  REQUIRE(statuses.size() == 1);
  const StatusEvent& s = *statuses[0];
  CHECK(s.stream_id == 0);
  CHECK(s.name == "onStatus");
  CHECK(s.level() == "status");
  CHECK(s.code() == "NetConnection.Connect.ReconnectRequest");
  CHECK(s.info.get_string("description") == "Shutting down.");
  // The tcUrl the client came with, query and all: the load balancer picks another node.
  CHECK(s.info.get_string("tcUrl") == "rtmp://lb.example:1935/live?token=abc");

  // Without a tcUrl the field is left out (the client then reconnects to its own).
  c.client_events.clear();
  c.server.request_reconnect("", "Shutting down.");
  c.exchange();
  statuses = only<StatusEvent>(c.client_events);
  REQUIRE(statuses.size() == 1);
  CHECK(statuses[0]->code() == "NetConnection.Connect.ReconnectRequest");
  CHECK(statuses[0]->info.find("tcUrl") == nullptr);
}
