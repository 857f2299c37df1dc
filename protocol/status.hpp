// The NetConnection / NetStream status codes we send, each with its wire string and its level in
// one table (status.cpp), so a reply's level can never disagree with its code.
//
// They travel in onStatus, in _error (connect, createStream), in onPlayStatus (Play.Switch,
// Play.Complete) and, code only, in onFCPublish / onFCUnpublish. docs/live.md and docs/vod.md
// describe which reply a player gets when.
#pragma once

#include <cstdint>
#include <string_view>

#include "protocol/amf_value.hpp"

namespace sluice::protocol {

enum class Status : uint8_t {
  // NetConnection
  ConnectSuccess,
  ConnectRejected,
  CallFailed,
  ConnectReconnectRequest,  // Enhanced RTMP: reconnect (docs/protocol.md, "Reconnect requests")
  // NetStream, publishing
  PublishStart,
  PublishBadName,
  PublishRejected,
  UnpublishSuccess,
  // NetStream, playing
  PlayReset,
  PlayStart,
  PlayStop,
  PlayStreamNotFound,
  PlayFailed,
  PlayPublishNotify,
  PlayUnpublishNotify,
  PlaySwitch,    // onPlayStatus
  PlayComplete,  // onPlayStatus
  PauseNotify,
  UnpauseNotify,
  SeekNotify,
  SeekFailed,
  SeekInvalidTime,
};
inline constexpr size_t kStatusCount = static_cast<size_t>(Status::SeekInvalidTime) + 1;

enum class StatusLevel : uint8_t { Status, Error };

// "NetStream.Play.Start", ...
std::string_view status_code(Status s);
StatusLevel status_level(Status s);
// "status" / "error", as the info object's level field carries it.
std::string_view level_name(StatusLevel l);
std::string_view status_level_name(Status s);

// The info object {level, code, description} of an onStatus / _error / onPlayStatus, plus extra
// properties (details, duration, ...) after them.
amf::Value status_info(Status s, std::string_view description, amf::Properties extra = {});

}  // namespace sluice::protocol
