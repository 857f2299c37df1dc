#include "protocol/srt_stream_id.hpp"

namespace sluice::protocol {

namespace {

constexpr std::string_view kAccessControl = "#!::";

// "APP/NAME[?query]" into the id's app, name and query.
Result<void> read_resource(std::string_view resource, SrtStreamId& id) {
  const size_t q = resource.find('?');
  std::string_view path = resource.substr(0, q);
  if (q != std::string_view::npos) id.query = std::string(resource.substr(q + 1));
  const size_t slash = path.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == path.size())
    return Error(Errc::Malformed, "the resource must be APP/NAME");
  id.app = std::string(path.substr(0, slash));
  id.name = std::string(path.substr(slash + 1));
  return {};
}

void add_query(std::string& query, std::string_view key, std::string_view value) {
  if (!query.empty()) query += '&';
  query.append(key).append("=").append(value);
}

Result<SrtStreamId> access_control(std::string_view pairs) {
  SrtStreamId id;
  std::string_view resource;
  std::string extra;  // keys that are not SRT's own
  while (!pairs.empty()) {
    const size_t comma = pairs.find(',');
    const std::string_view pair = pairs.substr(0, comma);
    pairs = comma == std::string_view::npos ? std::string_view{} : pairs.substr(comma + 1);
    if (pair.empty()) continue;
    const size_t eq = pair.find('=');
    if (eq == std::string_view::npos || eq == 0) return Error(Errc::Malformed, "a pair without key=value");
    const std::string_view key = pair.substr(0, eq), value = pair.substr(eq + 1);
    if (key == "r") {
      resource = value;
    } else if (key == "m") {
      if (value == "publish") {
        id.mode = SrtStreamId::Mode::Publish;
      } else if (value != "request") {
        return Error(Errc::Unsupported, "mode '" + std::string(value) + "' (request or publish)");
      }
    } else if (key == "u") {
      id.user = std::string(value);
    } else if (key == "s") {
      id.session = std::string(value);
    } else if (key == "t") {
      if (value != "stream") return Error(Errc::Unsupported, "type '" + std::string(value) + "' (stream only)");
    } else if (key != "h") {
      add_query(extra, key, value);
    }
  }
  if (resource.empty()) return Error(Errc::Malformed, "no resource (r=APP/NAME)");
  auto ok = read_resource(resource, id);
  if (!ok) return std::move(ok).error();
  if (!extra.empty()) id.query = id.query.empty() ? extra : id.query + "&" + extra;
  return id;
}

}  // namespace

Result<SrtStreamId> parse_srt_stream_id(std::string_view text) {
  if (text.empty()) return Error(Errc::Malformed, "no stream id");
  if (text.size() > kMaxSrtStreamId) return Error(Errc::LimitExceeded, "a stream id over 512 bytes");
  if (text.substr(0, kAccessControl.size()) == kAccessControl) {
    auto id = access_control(text.substr(kAccessControl.size()));
    if (!id) return std::move(id).error().wrap("stream id");
    return id;
  }
  SrtStreamId id;
  if (text.starts_with("publish:")) {
    id.mode = SrtStreamId::Mode::Publish;
    text.remove_prefix(8);
  } else if (text.starts_with("read:")) {
    text.remove_prefix(5);
  }
  auto ok = read_resource(text, id);
  if (!ok) return std::move(ok).error().wrap("stream id");
  return id;
}

}  // namespace sluice::protocol
