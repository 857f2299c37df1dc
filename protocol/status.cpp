#include "protocol/status.hpp"

#include <array>
#include <string>

namespace sluice::protocol {

namespace {

struct Entry {
  Status status;
  std::string_view code;
  StatusLevel level;
};

// In the order of the enum (checked below): the code is the index.
constexpr std::array<Entry, kStatusCount> kTable{{
    {Status::ConnectSuccess, "NetConnection.Connect.Success", StatusLevel::Status},
    {Status::ConnectRejected, "NetConnection.Connect.Rejected", StatusLevel::Error},
    {Status::CallFailed, "NetConnection.Call.Failed", StatusLevel::Error},
    {Status::ConnectReconnectRequest, "NetConnection.Connect.ReconnectRequest", StatusLevel::Status},
    {Status::PublishStart, "NetStream.Publish.Start", StatusLevel::Status},
    {Status::PublishBadName, "NetStream.Publish.BadName", StatusLevel::Error},
    {Status::PublishRejected, "NetStream.Publish.Rejected", StatusLevel::Error},
    {Status::UnpublishSuccess, "NetStream.Unpublish.Success", StatusLevel::Status},
    {Status::PlayReset, "NetStream.Play.Reset", StatusLevel::Status},
    {Status::PlayStart, "NetStream.Play.Start", StatusLevel::Status},
    {Status::PlayStop, "NetStream.Play.Stop", StatusLevel::Status},
    {Status::PlayStreamNotFound, "NetStream.Play.StreamNotFound", StatusLevel::Error},
    {Status::PlayFailed, "NetStream.Play.Failed", StatusLevel::Error},
    {Status::PlayPublishNotify, "NetStream.Play.PublishNotify", StatusLevel::Status},
    {Status::PlayUnpublishNotify, "NetStream.Play.UnpublishNotify", StatusLevel::Status},
    {Status::PlaySwitch, "NetStream.Play.Switch", StatusLevel::Status},
    {Status::PlayComplete, "NetStream.Play.Complete", StatusLevel::Status},
    {Status::PauseNotify, "NetStream.Pause.Notify", StatusLevel::Status},
    {Status::UnpauseNotify, "NetStream.Unpause.Notify", StatusLevel::Status},
    {Status::SeekNotify, "NetStream.Seek.Notify", StatusLevel::Status},
    {Status::SeekFailed, "NetStream.Seek.Failed", StatusLevel::Error},
    {Status::SeekInvalidTime, "NetStream.Seek.InvalidTime", StatusLevel::Error},
}};

constexpr bool table_in_enum_order() {
  for (size_t i = 0; i < kTable.size(); ++i)
    if (static_cast<size_t>(kTable[i].status) != i || kTable[i].code.empty()) return false;
  return true;
}
static_assert(table_in_enum_order(), "kTable must list every Status once, in enum order");

const Entry& entry(Status s) { return kTable[static_cast<size_t>(s)]; }

}  // namespace

std::string_view status_code(Status s) { return entry(s).code; }

StatusLevel status_level(Status s) { return entry(s).level; }

std::string_view level_name(StatusLevel l) { return l == StatusLevel::Error ? "error" : "status"; }

std::string_view status_level_name(Status s) { return level_name(status_level(s)); }

amf::Value status_info(Status s, std::string_view description, amf::Properties extra) {
  amf::Value info = amf::Value::object();
  info.set("level", amf::Value::string(std::string(status_level_name(s))));
  info.set("code", amf::Value::string(std::string(status_code(s))));
  info.set("description", amf::Value::string(std::string(description)));
  for (auto& [k, v] : extra) info.set(k, std::move(v));
  return info;
}

}  // namespace sluice::protocol
