// NetConnection / NetStream commands: parsing what OBS, FFmpeg, FMLE, librtmp and Flash send, and
// building the replies (_result, _error, onStatus, onFCPublish, |RtmpSampleAccess, onMetaData).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/amf_value.hpp"
#include "protocol/message.hpp"
#include "base/result.hpp"

namespace sluice::protocol {

// A command message decoded into its generic parts: name, transaction id, command object, arguments.
struct Command {
  std::string name;
  double transaction_id = 0;
  amf::Value command_object;     // usually null; an object for connect
  std::vector<amf::Value> args;  // everything after the command object
  bool amf3 = false;             // arrived as type 17

  // The n-th argument as a string / number, or nullopt when absent or of another type.
  std::optional<std::string> string_arg(size_t n) const;
  std::optional<double> number_arg(size_t n) const;
  std::optional<bool> boolean_arg(size_t n) const;
};

// Decodes a type 20 (AMF0) or type 17 (AMF3 flavour: leading format byte, then AMF0 values that may
// switch to AMF3) payload.
Result<Command> parse_command(uint8_t message_type, std::span<const uint8_t> payload);

// Enhanced RTMP v2 capsEx bits a client may announce in connect (docs/protocol.md, "Reconnect
// requests"); Sluice acts on Reconnect only.
inline constexpr uint32_t kCapsExReconnect = 0x01;
inline constexpr uint32_t kCapsExMultitrack = 0x02;
inline constexpr uint32_t kCapsExModEx = 0x04;
inline constexpr uint32_t kCapsExTimestampNanoOffset = 0x08;

struct ConnectCommand {
  double transaction_id = 1;
  std::string app;        // without any "?query"
  std::string app_query;  // what followed '?' in the app, if anything
  std::string tc_url;
  std::string flash_ver;
  std::string swf_url;
  std::string page_url;
  double object_encoding = 0;  // 0 = AMF0, 3 = AMF3; echoed in the result
  // The capsEx number of the command object, nullopt when absent or not a number: its whole part,
  // 0 when negative or NaN, every bit set when above 32 bits.
  std::optional<uint32_t> caps_ex;
  // No copy of the whole command object: a session keeps its ConnectCommand for the connection's
  // life, and the object (a dozen properties, ~0.6 KB) was the largest thing a player held
  // (docs/benchmarks.md, "Memory per player").

  // The client announced that it follows NetConnection.Connect.ReconnectRequest.
  bool can_reconnect() const { return caps_ex && (*caps_ex & kCapsExReconnect) != 0; }
};
Result<ConnectCommand> parse_connect(const Command& cmd);

struct PublishCommand {
  double transaction_id = 0;
  std::string name;   // stream name without "?query"
  std::string query;  // what followed '?', e.g. "token=abc"
  std::string type;   // "live", "record" or "append"
};
Result<PublishCommand> parse_publish(const Command& cmd);

struct PlayCommand {
  double transaction_id = 0;
  std::string name;
  std::string query;
  // Milliseconds, as every client sends them (FFmpeg -2000/-1000/0, librtmp -A 5 as 5000):
  // -2000 live or recorded, -1000 live only (any negative value: not a position), >= 0 a position.
  double start = -2000;
  double duration = -1;  // milliseconds; negative: until the end
  bool reset = true;
};
Result<PlayCommand> parse_play(const Command& cmd);

// Splits "name?query" at the first '?'.
void split_query(std::string_view in, std::string& name, std::string& query);

// Payload builders for command / data messages (AMF0).
std::vector<uint8_t> build_command(std::string_view name, double transaction_id, const amf::Value& command_object,
                                   std::span<const amf::Value> args = {});
std::vector<uint8_t> build_data(std::string_view name, std::span<const amf::Value> args);

// The onStatus info object: status_info() in protocol/status.hpp.

}  // namespace sluice::protocol
