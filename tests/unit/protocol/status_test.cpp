// The status code table (protocol/status.hpp): the same wire strings, levels and AMF bytes as the
// literals the server sends.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "protocol/amf0.hpp"
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
      {Status::PublishStart, "NetStream.Publish.Start", "status"},
      {Status::PublishBadName, "NetStream.Publish.BadName", "error"},
      {Status::PublishUnauthorized, "NetStream.Publish.Unauthorized", "error"},
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
