#include "protocol/commands.hpp"

#include "protocol/amf0.hpp"
#include "base/byte_io.hpp"

namespace sluice::protocol {

namespace {

// Flash and FMLE send a few dozen bytes of arguments; this bounds hostile nesting and counts.
constexpr amf::DecodeLimits kCommandLimits{.max_depth = 16, .max_items = 4096, .max_string = 64 * 1024};

const amf::Value* arg_at(const Command& cmd, size_t n) { return n < cmd.args.size() ? &cmd.args[n] : nullptr; }

}  // namespace

std::optional<std::string> Command::string_arg(size_t n) const {
  const amf::Value* v = arg_at(*this, n);
  if (!v || !v->is_string()) return std::nullopt;
  return v->as_string();
}

std::optional<double> Command::number_arg(size_t n) const {
  const amf::Value* v = arg_at(*this, n);
  if (!v || !v->is_number()) return std::nullopt;
  return v->as_number();
}

std::optional<bool> Command::boolean_arg(size_t n) const {
  const amf::Value* v = arg_at(*this, n);
  if (!v || !v->is_boolean()) return std::nullopt;
  return v->as_boolean();
}

Result<Command> parse_command(uint8_t message_type, std::span<const uint8_t> payload) {
  Command cmd;
  if (message_type == msg_type::kCommandAmf3) {
    // The AMF3 flavour starts with a format selector byte (0) before ordinary AMF0 values.
    if (payload.empty()) return Error(Errc::BadCommand, "empty AMF3 command");
    payload = payload.subspan(1);
    cmd.amf3 = true;
  }
  ByteReader in(payload);
  auto name = amf::decode_amf0(in, kCommandLimits);
  if (!name) return Error(name.error()).wrap("command name");
  if (!name->is_string()) return Error(Errc::BadCommand, "command name is not a string");
  cmd.name = name->as_string();

  if (in.empty()) return cmd;  // some clients omit the transaction id of notifications
  auto txn = amf::decode_amf0(in, kCommandLimits);
  if (!txn) return Error(txn.error()).wrap(cmd.name + " transaction id");
  cmd.transaction_id = txn->as_number();

  if (in.empty()) return cmd;
  auto object = amf::decode_amf0(in, kCommandLimits);
  if (!object) return Error(object.error()).wrap(cmd.name + " command object");
  cmd.command_object = std::move(*object);

  while (!in.empty()) {
    if (cmd.args.size() >= kCommandLimits.max_items)
      return Error(Errc::LimitExceeded, cmd.name + ": too many arguments");
    auto arg = amf::decode_amf0(in, kCommandLimits);
    if (!arg) return Error(arg.error()).wrap(cmd.name + " argument " + std::to_string(cmd.args.size()));
    cmd.args.push_back(std::move(*arg));
  }
  return cmd;
}

void split_query(std::string_view in, std::string& name, std::string& query) {
  size_t q = in.find('?');
  if (q == std::string_view::npos) {
    name = std::string(in);
    query.clear();
  } else {
    name = std::string(in.substr(0, q));
    query = std::string(in.substr(q + 1));
  }
}

static uint32_t caps_ex_bits(double v) {
  if (!(v >= 1)) return 0;  // negative, zero, NaN
  if (v >= 4294967296.0) return 0xFFFFFFFFu;
  return static_cast<uint32_t>(v);
}

Result<ConnectCommand> parse_connect(const Command& cmd) {
  if (!cmd.command_object.is_object_like()) return Error(Errc::BadCommand, "connect without a command object");
  ConnectCommand c;
  c.transaction_id = cmd.transaction_id;
  const amf::Value& o = cmd.command_object;
  split_query(o.get_string("app"), c.app, c.app_query);
  // Some clients put a trailing slash on the app ("live/"); it names the same app.
  while (!c.app.empty() && c.app.back() == '/') c.app.pop_back();
  c.tc_url = o.get_string("tcUrl");
  c.flash_ver = o.get_string("flashVer");
  c.swf_url = o.get_string("swfUrl");
  c.page_url = o.get_string("pageUrl");
  c.object_encoding = o.get_number("objectEncoding", 0);
  if (const amf::Value* caps = o.find("capsEx"); caps && caps->is_number()) {
    c.caps_ex = caps_ex_bits(caps->as_number());
  }
  return c;
}

Result<PublishCommand> parse_publish(const Command& cmd) {
  PublishCommand p;
  p.transaction_id = cmd.transaction_id;
  auto name = cmd.string_arg(0);
  // Wirecast sends `false` as the name when it stops; that is a bad command, not a crash.
  if (!name) return Error(Errc::BadCommand, "publish without a stream name");
  split_query(*name, p.name, p.query);
  p.type = cmd.string_arg(1).value_or("live");
  return p;
}

Result<PlayCommand> parse_play(const Command& cmd) {
  PlayCommand p;
  p.transaction_id = cmd.transaction_id;
  auto name = cmd.string_arg(0);
  if (!name) return Error(Errc::BadCommand, "play without a stream name");
  split_query(*name, p.name, p.query);
  p.start = cmd.number_arg(1).value_or(-2000);
  p.duration = cmd.number_arg(2).value_or(-1);
  // reset may be a boolean (Flash) or a number (old clients: 0/1/2/3).
  if (auto b = cmd.boolean_arg(3)) {
    p.reset = *b;
  } else if (auto n = cmd.number_arg(3)) {
    // Any double may come: one outside int64 (or NaN) is no reset, never an overflowing cast.
    p.reset = *n >= 0 && *n < 9.2e18 && (static_cast<int64_t>(*n) & 1) != 0;
  }
  return p;
}

std::vector<uint8_t> build_command(std::string_view name, double transaction_id, const amf::Value& command_object,
                                   std::span<const amf::Value> args) {
  std::vector<uint8_t> out;
  amf::encode_amf0(amf::Value::string(std::string(name)), out);
  amf::encode_amf0(amf::Value::number(transaction_id), out);
  amf::encode_amf0(command_object, out);
  for (const auto& a : args) amf::encode_amf0(a, out);
  return out;
}

std::vector<uint8_t> build_data(std::string_view name, std::span<const amf::Value> args) {
  std::vector<uint8_t> out;
  amf::encode_amf0(amf::Value::string(std::string(name)), out);
  for (const auto& a : args) amf::encode_amf0(a, out);
  return out;
}

}  // namespace sluice::protocol
