// The status code table (protocol/status.hpp) and the typed Session replies built on it: the
// same wire strings, levels and AMF bytes as the string-taking calls they replaced.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "protocol/amf0.hpp"
#include "protocol/chunk_writer.hpp"
#include "protocol/session.hpp"
#include "protocol/status.hpp"

using namespace sluice;
using namespace sluice::protocol;

namespace {

amf::Value str(std::string_view s) { return amf::Value::string(std::string(s)); }

// The info object built field by field from literal strings.
amf::Value literal_info(std::string_view level, std::string_view code, std::string_view description,
                        amf::Properties extra = {}) {
  amf::Value info = amf::Value::object();
  info.set("level", str(level));
  info.set("code", str(code));
  info.set("description", str(description));
  for (auto& [k, v] : extra) info.set(k, std::move(v));
  return info;
}

std::vector<uint8_t> amf0(const amf::Value& v) {
  std::vector<uint8_t> out;
  amf::encode_amf0(v, out);
  return out;
}

// A server session past the handshake, its output drained, and the client that drove it.
struct Handshaken {
  Session client{options_for(SessionRole::Client)};
  Session server{options_for(SessionRole::Server)};
  std::vector<SessionEvent> client_events, server_events;

  Handshaken() {
    for (int i = 0; i < 3; ++i) {
      std::vector<uint8_t> bytes;
      client.drain_output(bytes);
      REQUIRE(server.feed(bytes, server_events).ok());
      bytes.clear();
      server.drain_output(bytes);
      REQUIRE(client.feed(bytes, client_events).ok());
    }
    REQUIRE(server.handshake_done());
    REQUIRE(client.handshake_done());
    client_events.clear();
  }

  std::vector<uint8_t> take_server_output() {
    std::vector<uint8_t> bytes;
    server.drain_output(bytes);
    return bytes;
  }

  // What the client makes of everything the server queued.
  const std::vector<SessionEvent>& deliver() {
    std::vector<uint8_t> bytes = take_server_output();
    client_events.clear();
    REQUIRE(client.feed(bytes, client_events).ok());
    return client_events;
  }
};

// The server's first message on the NetStream chunk stream, as a fresh writer chunks it.
std::vector<uint8_t> first_stream_message(uint8_t type, uint32_t stream_id, const std::vector<uint8_t>& payload) {
  ChunkWriter w;
  std::vector<uint8_t> out;
  w.write(csid::kStream, type, 0, stream_id, payload, out);
  return out;
}

const StatusEvent& status_at(const std::vector<SessionEvent>& events, size_t i) {
  REQUIRE(i < events.size());
  const auto* s = std::get_if<StatusEvent>(&events[i]);
  REQUIRE(s != nullptr);
  return *s;
}

UserControlEvent control_at(const std::vector<SessionEvent>& events, size_t i) {
  REQUIRE(i < events.size());
  const auto* uc = std::get_if<UserControlMessageEvent>(&events[i]);
  REQUIRE(uc != nullptr);
  return uc->control.event;
}

}  // namespace

TEST_CASE("every status code has its wire string and level") {
  struct Expected {
    Status status;
    const char* code;
    const char* level;
  };
  const Expected expected[] = {
      {Status::ConnectSuccess, "NetConnection.Connect.Success", "status"},
      {Status::ConnectRejected, "NetConnection.Connect.Rejected", "error"},
      {Status::CallFailed, "NetConnection.Call.Failed", "error"},
      {Status::ConnectReconnectRequest, "NetConnection.Connect.ReconnectRequest", "status"},
      {Status::PublishStart, "NetStream.Publish.Start", "status"},
      {Status::PublishBadName, "NetStream.Publish.BadName", "error"},
      {Status::PublishRejected, "NetStream.Publish.Rejected", "error"},
      {Status::UnpublishSuccess, "NetStream.Unpublish.Success", "status"},
      {Status::PlayReset, "NetStream.Play.Reset", "status"},
      {Status::PlayStart, "NetStream.Play.Start", "status"},
      {Status::PlayStop, "NetStream.Play.Stop", "status"},
      {Status::PlayStreamNotFound, "NetStream.Play.StreamNotFound", "error"},
      {Status::PlayFailed, "NetStream.Play.Failed", "error"},
      {Status::PlayPublishNotify, "NetStream.Play.PublishNotify", "status"},
      {Status::PlayUnpublishNotify, "NetStream.Play.UnpublishNotify", "status"},
      {Status::PlaySwitch, "NetStream.Play.Switch", "status"},
      {Status::PlayComplete, "NetStream.Play.Complete", "status"},
      {Status::PauseNotify, "NetStream.Pause.Notify", "status"},
      {Status::UnpauseNotify, "NetStream.Unpause.Notify", "status"},
      {Status::SeekNotify, "NetStream.Seek.Notify", "status"},
      {Status::SeekFailed, "NetStream.Seek.Failed", "error"},
      {Status::SeekInvalidTime, "NetStream.Seek.InvalidTime", "error"},
  };
  CHECK(std::size(expected) == kStatusCount);
  std::vector<bool> seen(kStatusCount, false);
  for (const auto& e : expected) {
    CAPTURE(e.code);
    CHECK(status_code(e.status) == e.code);
    CHECK(status_level_name(e.status) == e.level);
    CHECK(level_name(status_level(e.status)) == e.level);
    seen.at(static_cast<size_t>(e.status)) = true;
  }
  CHECK(std::find(seen.begin(), seen.end(), false) == seen.end());
}

TEST_CASE("status_info encodes level, code, description, then the extra properties") {
  amf::Value typed = status_info(Status::PlayStart, "Started playing cam.", {{"details", str("cam")}});
  amf::Value literal =
      literal_info("status", "NetStream.Play.Start", "Started playing cam.", {{"details", str("cam")}});
  CHECK(amf0(typed) == amf0(literal));
  const auto& props = typed.properties();
  REQUIRE(props.size() == 4);
  CHECK(props[0].first == "level");
  CHECK(props[1].first == "code");
  CHECK(props[2].first == "description");
  CHECK(props[3].first == "details");

  CHECK(amf0(status_info(Status::SeekFailed, "Live streams cannot seek.")) ==
        amf0(literal_info("error", "NetStream.Seek.Failed", "Live streams cannot seek.")));
}

TEST_CASE("a typed onStatus is the same message on the wire as before") {
  Handshaken h;
  h.server.send_status(1, Status::PlayStreamNotFound, "No such stream: a b.mp4.", {{"details", str("a b.mp4")}});
  amf::Value info =
      literal_info("error", "NetStream.Play.StreamNotFound", "No such stream: a b.mp4.", {{"details", str("a b.mp4")}});
  auto payload = build_command("onStatus", 0, amf::Value::null(), std::span(&info, 1));
  CHECK(h.take_server_output() == first_stream_message(msg_type::kCommandAmf0, 1, payload));
}

TEST_CASE("a typed reply decodes to its code, level and description") {
  Handshaken h;
  h.server.send_status(1, Status::PlayFailed, "Read error.");
  h.server.reject_publish(1, Status::PublishRejected, "Publishing is not allowed: missing or wrong token.");
  const auto& events = h.deliver();
  REQUIRE(events.size() == 2);
  const auto& failed = status_at(events, 0);
  CHECK(failed.name == "onStatus");
  CHECK(failed.stream_id == 1);
  CHECK(failed.level() == "error");
  CHECK(failed.code() == "NetStream.Play.Failed");
  CHECK(failed.info.get_string("description") == "Read error.");
  const auto& rejected = status_at(events, 1);
  CHECK(rejected.level() == "error");
  CHECK(rejected.code() == "NetStream.Publish.Rejected");
  CHECK(rejected.info.get_string("description") == "Publishing is not allowed: missing or wrong token.");
}

TEST_CASE("pause and unpause notifications: user control, then onStatus") {
  Handshaken h;
  h.server.notify_pause(1, "Paused live stream cam.");
  h.server.notify_unpause(1, "Unpaused clip.flv.", {{"details", str("clip.flv")}});
  const auto& events = h.deliver();
  REQUIRE(events.size() == 4);
  CHECK(control_at(events, 0) == UserControlEvent::StreamEof);
  const auto& paused = status_at(events, 1);
  CHECK(paused.level() == "status");
  CHECK(paused.code() == "NetStream.Pause.Notify");
  CHECK(paused.info.get_string("description") == "Paused live stream cam.");
  CHECK(paused.info.get_string("details", "absent") == "absent");
  CHECK(control_at(events, 2) == UserControlEvent::StreamBegin);
  const auto& unpaused = status_at(events, 3);
  CHECK(unpaused.level() == "status");
  CHECK(unpaused.code() == "NetStream.Unpause.Notify");
  CHECK(unpaused.info.get_string("description") == "Unpaused clip.flv.");
  CHECK(unpaused.info.get_string("details") == "clip.flv");
}

TEST_CASE("a seek notification is Seek.Notify then Play.Start, the same bytes as the two statuses") {
  Handshaken h;
  h.server.notify_seek(1, "clip.flv", {{"details", str("clip.flv")}});
  std::vector<uint8_t> helper = h.take_server_output();

  Handshaken expected;
  expected.server.send_status(1, Status::SeekNotify, "Seeking clip.flv.", {{"details", str("clip.flv")}});
  expected.server.send_status(1, Status::PlayStart, "Started playing clip.flv.", {{"details", str("clip.flv")}});
  CHECK(helper == expected.take_server_output());

  h.server.notify_seek(1, "cam");
  const auto& events = h.deliver();
  REQUIRE(events.size() == 2);
  CHECK(status_at(events, 0).code() == "NetStream.Seek.Notify");
  CHECK(status_at(events, 0).info.get_string("description") == "Seeking cam.");
  CHECK(status_at(events, 1).code() == "NetStream.Play.Start");
  CHECK(status_at(events, 1).info.get_string("description") == "Started playing cam.");
  CHECK(status_at(events, 1).info.get_string("details", "absent") == "absent");
}

TEST_CASE("onPlayStatus is a data message with the typed info object") {
  Handshaken h;
  amf::Properties extra = {{"duration", amf::Value::number(12.5)}, {"bytes", amf::Value::number(4096)}};
  h.server.send_play_status(1, Status::PlayComplete, "Finished playing.", extra);
  amf::Value info = literal_info("status", "NetStream.Play.Complete", "Finished playing.", extra);
  auto payload = build_data("onPlayStatus", std::span(&info, 1));
  CHECK(h.take_server_output() == first_stream_message(msg_type::kDataAmf0, 1, payload));
}
