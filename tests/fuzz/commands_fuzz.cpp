// Command decoding: arbitrary payloads as type 20 and type 17 command messages, then the typed
// parsers (connect, publish, play). No crash; a decoded command re-encodes and decodes the same.
#include <cstddef>
#include <cstdint>
#include <span>

#include "protocol/commands.hpp"

using namespace sluice;
using namespace sluice::protocol;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const uint8_t> in(data, size);
  for (uint8_t type : {msg_type::kCommandAmf0, msg_type::kCommandAmf3}) {
    auto cmd = parse_command(type, in);
    if (!cmd) continue;
    (void)parse_connect(*cmd);
    (void)parse_publish(*cmd);
    (void)parse_play(*cmd);
    auto bytes = build_command(cmd->name, cmd->transaction_id, cmd->command_object, cmd->args);
    auto again = parse_command(msg_type::kCommandAmf0, bytes);
    if (!again || again->name != cmd->name || again->args.size() != cmd->args.size()) __builtin_trap();
  }
  return 0;
}
