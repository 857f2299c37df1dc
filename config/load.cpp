// YAML -> Config. The only code that walks yaml-cpp nodes; every yaml-cpp exception is caught here.
//
// The loader never stops at the first problem: each reader records an error (with the node's
// position and the key path) and leaves the default in place, so one run reports every mistake.
#include "config/load.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <vector>

#include "config/default_config.hpp"
#include "config/units.hpp"

namespace sluice::config {

namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxErrors = 20;                // Past this, "... and N more".
constexpr uintmax_t kMaxFileSize = 1024 * 1024;  // A config file is small; refuse to slurp a huge one.

std::string in_quotes(std::string_view s) { return "\"" + std::string(s) + "\""; }

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

const char* kind_name(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Scalar:
      return "a single value";
    default:
      return "empty";
  }
}

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

// The closest known key if it is plausibly a typo ("gop_cahce" -> "gop_cache").
std::optional<std::string_view> suggest(std::string_view key, const std::vector<std::string_view>& known) {
  std::optional<std::string_view> best;
  size_t best_distance = 3;
  for (std::string_view k : known) {
    size_t d = edit_distance(lower(key), k);
    if (d < best_distance && d <= std::max<size_t>(1, k.size() / 3)) {
      best = k;
      best_distance = d;
    }
  }
  return best;
}

// A key/value pair of a map, with the dotted path used in messages.
struct Field {
  YAML::Node key;
  YAML::Node value;
  std::string path;

  // A null value's mark points past it (often the next line); the key is where the user looks.
  YAML::Mark mark() const { return value.IsNull() ? key.Mark() : value.Mark(); }
};

std::string child_path(const std::string& parent, std::string_view key) {
  return parent.empty() ? std::string(key) : parent + "." + std::string(key);
}

class Loader;

// The keys of one YAML map: unknown and duplicate keys are reported on construction, then the
// reader take()s the keys it knows.
class Section {
 public:
  Section(Loader& loader, const Field& self, std::vector<std::string_view> known);

  std::optional<Field> take(std::string_view key) {
    for (Field& f : fields_) {
      if (f.key.Scalar() == key) return f;
    }
    return std::nullopt;
  }
  bool valid() const { return valid_; }

 private:
  std::vector<Field> fields_;
  bool valid_ = true;
};

class Loader {
 public:
  Loader(std::string source, std::string base_dir) : source_(std::move(source)), base_dir_(std::move(base_dir)) {}

  Config load(const YAML::Node& root);

  const std::vector<std::string>& errors() const { return errors_; }

  std::string location(const YAML::Mark& mark) const {
    if (mark.line < 0) return source_;
    return source_ + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
  }
  void error(const YAML::Mark& mark, const std::string& path, const std::string& what) {
    errors_.push_back(location(mark) + ": " + (path.empty() ? "" : path + ": ") + what);
  }
  void error(const Field& f, const std::string& what) { error(f.mark(), f.path, what); }

  // Readers: on a bad value they record an error, leave `out` alone and return false.
  bool scalar(const Field& f, const char* expected);
  bool read_bool(const Field& f, bool& out);
  template <typename T>
  bool read_uint(const Field& f, T& out, uint64_t min, uint64_t max);
  template <typename T>
  bool read_size(const Field& f, T& out, uint64_t min, uint64_t max);
  bool read_duration(const Field& f, Duration& out, Duration min, Duration max, bool zero_ok);
  bool read_string(const Field& f, std::string& out);
  bool read_path(const Field& f, std::string& out);
  bool read_listen(const Field& f, std::vector<ListenAddress>& out);
  bool read_cidrs(const Field& f, std::vector<Cidr>& out);
  bool read_string_list(const Field& f, std::vector<std::string>& out);
  // Each item of a single value or a list, with "path[i]" paths for list items.
  std::vector<Field> items(const Field& f, const char* expected);

 private:
  void load_rtmp(const Field& f, RtmpConfig& rtmp);
  void load_player_queue(const Field& f, PlayerQueueConfig& q);
  void load_apps(const Field& f, std::vector<AppConfig>& apps);
  void load_app(const Field& f, AppConfig& app);
  void load_http(const Field& f, HttpConfig& http);
  void load_log(const Field& f, LogConfig& log);
  void check_listeners(const Config& cfg);

  struct ListenSite {
    ListenAddress address;
    YAML::Mark mark;
    std::string path;
  };

  std::string source_;
  std::string base_dir_;
  std::vector<std::string> errors_;
  std::vector<ListenSite> listen_sites_;  // Addresses given in the file, to place conflict errors.
};

Section::Section(Loader& loader, const Field& self, std::vector<std::string_view> known) {
  if (self.value.IsNull()) return;  // "log:" with nothing under it: all defaults.
  if (!self.value.IsMap()) {
    loader.error(self, std::string("must be a map of settings, not ") + kind_name(self.value));
    valid_ = false;
    return;
  }
  for (auto it = self.value.begin(); it != self.value.end(); ++it) {
    Field f{it->first, it->second, {}};
    if (!f.key.IsScalar()) {
      loader.error(f.key.Mark(), self.path, "keys must be plain names");
      continue;
    }
    const std::string& name = f.key.Scalar();
    f.path = child_path(self.path, name);
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      std::string what = "unknown key";
      if (auto s = suggest(name, known)) what += " (did you mean " + std::string(*s) + "?)";
      loader.error(f.key.Mark(), f.path, what);
      continue;
    }
    auto dup = std::find_if(fields_.begin(), fields_.end(), [&](const Field& g) { return g.key.Scalar() == name; });
    if (dup != fields_.end()) {
      loader.error(f.key.Mark(), f.path, "duplicate key (first set at line " + std::to_string(dup->key.Mark().line + 1) + ")");
      continue;
    }
    fields_.push_back(std::move(f));
  }
}

bool Loader::scalar(const Field& f, const char* expected) {
  if (f.value.IsScalar()) return true;
  if (f.value.IsNull()) {
    error(f, std::string("has no value (expected ") + expected + ")");
  } else {
    error(f, std::string("must be ") + expected + ", not " + kind_name(f.value));
  }
  return false;
}

bool Loader::read_bool(const Field& f, bool& out) {
  if (!scalar(f, "true or false")) return false;
  std::string v = lower(f.value.Scalar());
  if (v == "true" || v == "yes" || v == "on") {
    out = true;
  } else if (v == "false" || v == "no" || v == "off") {
    out = false;
  } else {
    error(f, "must be true or false (got " + in_quotes(f.value.Scalar()) + ")");
    return false;
  }
  return true;
}

template <typename T>
bool Loader::read_uint(const Field& f, T& out, uint64_t min, uint64_t max) {
  if (!scalar(f, "an integer")) return false;
  const std::string& text = f.value.Scalar();
  std::string_view digits = text;
  bool negative = !digits.empty() && digits.front() == '-';
  if (negative) digits.remove_prefix(1);
  uint64_t v = 0;
  bool ok = !digits.empty();
  for (char c : digits) {
    if (c < '0' || c > '9' || v > (UINT64_MAX - 9) / 10) {
      ok = false;
      break;
    }
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  if (!ok) {
    error(f, "must be an integer (got " + in_quotes(text) + ")");
    return false;
  }
  if (negative || v < min || v > max) {
    error(f, "must be " + std::to_string(min) + ".." + std::to_string(max) + " (got " + text + ")");
    return false;
  }
  out = static_cast<T>(v);
  return true;
}

template <typename T>
bool Loader::read_size(const Field& f, T& out, uint64_t min, uint64_t max) {
  if (!scalar(f, "a size such as 64MiB")) return false;
  auto v = parse_size(f.value.Scalar());
  if (!v) {
    error(f, v.error().context);
    return false;
  }
  if (*v < min || *v > max) {
    error(f, "must be " + format_size(min) + ".." + format_size(max) + " (got " + f.value.Scalar() + ")");
    return false;
  }
  out = static_cast<T>(*v);
  return true;
}

bool Loader::read_duration(const Field& f, Duration& out, Duration min, Duration max, bool zero_ok) {
  if (!scalar(f, "a duration such as 30s")) return false;
  auto v = parse_duration(f.value.Scalar());
  if (!v) {
    error(f, v.error().context);
    return false;
  }
  if ((*v < min || *v > max) && !(zero_ok && v->count() == 0)) {
    error(f, std::string("must be ") + (zero_ok ? "0 or " : "") + format_duration(min) + ".." + format_duration(max) +
                 " (got " + f.value.Scalar() + ")");
    return false;
  }
  out = *v;
  return true;
}

bool Loader::read_string(const Field& f, std::string& out) {
  if (!scalar(f, "a string")) return false;
  out = f.value.Scalar();
  return true;
}

bool Loader::read_path(const Field& f, std::string& out) {
  std::string text;
  if (!read_string(f, text)) return false;
  if (text.empty()) {
    error(f, "must not be empty");
    return false;
  }
  fs::path p(text);
  if (p.is_relative()) p = fs::path(base_dir_) / p;
  std::string s = p.lexically_normal().string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  out = s;
  return true;
}

std::vector<Field> Loader::items(const Field& f, const char* expected) {
  std::vector<Field> out;
  if (f.value.IsSequence()) {
    for (size_t i = 0; i < f.value.size(); ++i) {
      out.push_back(Field{f.key, f.value[i], f.path + "[" + std::to_string(i) + "]"});
    }
  } else if (f.value.IsScalar()) {
    out.push_back(f);
  } else if (f.value.IsNull()) {
    error(f, std::string("has no value (expected ") + expected + ", or a list of them)");
  } else {
    error(f, std::string("must be ") + expected + " or a list of them, not " + kind_name(f.value));
  }
  return out;
}

bool Loader::read_listen(const Field& f, std::vector<ListenAddress>& out) {
  std::vector<ListenAddress> list;
  bool ok = true;
  std::vector<ListenSite> sites;
  for (const Field& item : items(f, "an address:port")) {
    if (!scalar(item, "an address:port")) {
      ok = false;
      continue;
    }
    auto a = parse_listen_address(item.value.Scalar());
    if (!a) {
      error(item, a.error().context);
      ok = false;
      continue;
    }
    if (std::find(list.begin(), list.end(), *a) != list.end()) {
      error(item, "duplicate address " + a->to_string());
      ok = false;
      continue;
    }
    list.push_back(*a);
    sites.push_back(ListenSite{*a, item.mark(), item.path});
  }
  if (f.value.IsSequence() && f.value.size() == 0) {
    error(f, "needs at least one address");
    return false;
  }
  if (!ok || list.empty()) return false;
  out = std::move(list);
  listen_sites_.insert(listen_sites_.end(), sites.begin(), sites.end());
  return true;
}

bool Loader::read_cidrs(const Field& f, std::vector<Cidr>& out) {
  std::vector<Cidr> list;
  bool ok = true;
  // An explicit empty list is allowed: it means "anyone".
  if (f.value.IsSequence() && f.value.size() == 0) {
    out.clear();
    return true;
  }
  for (const Field& item : items(f, "a CIDR block such as 10.0.0.0/8")) {
    if (!scalar(item, "a CIDR block such as 10.0.0.0/8")) {
      ok = false;
      continue;
    }
    auto c = parse_cidr(item.value.Scalar());
    if (!c) {
      error(item, c.error().context);
      ok = false;
      continue;
    }
    list.push_back(*c);
  }
  if (!ok) return false;
  out = std::move(list);
  return true;
}

bool Loader::read_string_list(const Field& f, std::vector<std::string>& out) {
  std::vector<std::string> list;
  bool ok = true;
  if (f.value.IsSequence() && f.value.size() == 0) {
    out.clear();
    return true;
  }
  for (const Field& item : items(f, "a string")) {
    std::string s;
    if (!read_string(item, s)) {
      ok = false;
      continue;
    }
    list.push_back(std::move(s));
  }
  if (!ok) return false;
  out = std::move(list);
  return true;
}

bool token_chars_ok(std::string_view s, std::string_view extra) {
  return std::all_of(s.begin(), s.end(), [&](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
           c == '_' || c == '~' || extra.find(c) != std::string_view::npos;
  });
}

bool app_name_ok(std::string_view s) {
  if (s.empty() || s == "." || s == "..") return false;
  return token_chars_ok(s, "") && s.find('~') == std::string_view::npos;
}

Config Loader::load(const YAML::Node& root) {
  Config cfg;
  Field top_field{YAML::Node(), root, ""};
  if (!root.IsNull() && !root.IsMap()) {
    error(root.Mark(), "", std::string("the file must be a map of sections (rtmp, apps, http, log), not ") +
                               kind_name(root));
    return cfg;
  }
  Section top(*this, top_field, {"workers", "rtmp", "apps", "http", "log"});
  if (auto f = top.take("workers")) {
    if (f->value.IsScalar() && lower(f->value.Scalar()) == "auto") {
      cfg.workers = 0;
    } else if (scalar(*f, "an integer or auto")) {
      if (f->value.Scalar().find_first_not_of("0123456789") != std::string::npos) {
        error(*f, "must be an integer or auto (got " + in_quotes(f->value.Scalar()) + ")");
      } else {
        read_uint(*f, cfg.workers, 1, 1024);
      }
    }
  }
  if (auto f = top.take("rtmp")) load_rtmp(*f, cfg.rtmp);
  if (auto f = top.take("apps")) {
    load_apps(*f, cfg.apps);
  } else {
    error(YAML::Mark::null_mark(), "apps", "missing: at least one app is required (e.g. live: { type: live })");
  }
  if (auto f = top.take("http")) {
    cfg.http.enabled = true;  // Writing an http section means wanting HTTP, unless it says otherwise.
    load_http(*f, cfg.http);
  }
  if (auto f = top.take("log")) load_log(*f, cfg.log);
  check_listeners(cfg);
  return cfg;
}

void Loader::load_rtmp(const Field& self, RtmpConfig& rtmp) {
  Section s(*this, self,
            {"listen", "chunk_size", "window_ack_size", "max_message_size", "max_connections", "handshake_timeout",
             "idle_timeout", "ping_interval", "player_queue", "io_uring"});
  if (auto f = s.take("listen")) read_listen(*f, rtmp.listen);
  if (auto f = s.take("chunk_size")) read_uint(*f, rtmp.chunk_size, 128, 65536);
  if (auto f = s.take("window_ack_size")) read_uint(*f, rtmp.window_ack_size, 4096, 0x7FFFFFFF);
  // 16MiB is the wire maximum plus one (the length field has 24 bits), i.e. "no extra limit".
  if (auto f = s.take("max_message_size")) read_size(*f, rtmp.max_message_size, 64 * kKiB, 16 * kMiB);
  if (auto f = s.take("max_connections")) read_uint(*f, rtmp.max_connections, 0, 10'000'000);
  using std::chrono::hours;
  using std::chrono::minutes;
  using std::chrono::seconds;
  if (auto f = s.take("handshake_timeout")) {
    read_duration(*f, rtmp.handshake_timeout, Duration(100), minutes(10), false);
  }
  auto idle = s.take("idle_timeout");
  auto ping = s.take("ping_interval");
  bool idle_ok = !idle || read_duration(*idle, rtmp.idle_timeout, seconds(1), hours(1000), true);
  bool ping_ok = !ping || read_duration(*ping, rtmp.ping_interval, seconds(1), hours(1000), true);
  if ((idle || ping) && idle_ok && ping_ok && rtmp.ping_interval.count() != 0 && rtmp.idle_timeout.count() != 0 &&
      rtmp.ping_interval >= rtmp.idle_timeout) {
    error(ping ? *ping : *idle, "ping_interval (" + format_duration(rtmp.ping_interval) +
                                    ") must be shorter than idle_timeout (" + format_duration(rtmp.idle_timeout) +
                                    "), or a quiet but healthy player is closed before it is pinged");
  }
  if (auto f = s.take("player_queue")) load_player_queue(*f, rtmp.player_queue);
  if (auto f = s.take("io_uring")) read_bool(*f, rtmp.io_uring);
}

void Loader::load_player_queue(const Field& self, PlayerQueueConfig& q) {
  Section s(*this, self, {"soft_bytes", "hard_bytes", "soft_delay", "hard_delay", "write_delay"});
  auto soft_bytes = s.take("soft_bytes");
  auto hard_bytes = s.take("hard_bytes");
  auto soft_delay = s.take("soft_delay");
  auto hard_delay = s.take("hard_delay");
  auto write_delay = s.take("write_delay");
  bool ok = true;
  if (soft_bytes) ok &= read_size(*soft_bytes, q.soft_bytes, 16 * kKiB, kGiB);
  if (hard_bytes) ok &= read_size(*hard_bytes, q.hard_bytes, 16 * kKiB, 4 * kGiB);
  if (soft_delay) ok &= read_duration(*soft_delay, q.soft_delay, Duration(100), std::chrono::minutes(10), false);
  if (hard_delay) ok &= read_duration(*hard_delay, q.hard_delay, Duration(100), std::chrono::hours(1), false);
  if (write_delay) ok &= read_duration(*write_delay, q.write_delay, Duration(0), Duration(500), true);
  if (!ok) return;
  if (q.soft_bytes > q.hard_bytes) {
    error(soft_bytes ? *soft_bytes : *hard_bytes, "soft_bytes (" + format_size(q.soft_bytes) +
                                                      ") must not exceed hard_bytes (" + format_size(q.hard_bytes) + ")");
  }
  if (q.soft_delay > q.hard_delay) {
    error(soft_delay ? *soft_delay : *hard_delay, "soft_delay (" + format_duration(q.soft_delay) +
                                                      ") must not exceed hard_delay (" + format_duration(q.hard_delay) + ")");
  }
}

void Loader::load_apps(const Field& self, std::vector<AppConfig>& apps) {
  if (!self.value.IsMap()) {
    error(self, std::string("must be a map of app name to settings (e.g. live: { type: live }), not ") +
                    kind_name(self.value));
    return;
  }
  for (auto it = self.value.begin(); it != self.value.end(); ++it) {
    Field f{it->first, it->second, {}};
    if (!f.key.IsScalar()) {
      error(f.key.Mark(), self.path, "app names must be plain names");
      continue;
    }
    const std::string& name = f.key.Scalar();
    f.path = child_path(self.path, name);
    if (!app_name_ok(name)) {
      error(f.key.Mark(), f.path, "app names may only use letters, digits, '.', '_' and '-'");
      continue;
    }
    auto dup = std::find_if(apps.begin(), apps.end(), [&](const AppConfig& a) { return a.name == name; });
    if (dup != apps.end()) {
      error(f.key.Mark(), f.path, "duplicate app name");
      continue;
    }
    AppConfig app;
    app.name = name;
    load_app(f, app);
    apps.push_back(std::move(app));
  }
  if (apps.empty() && self.value.size() == 0) error(self, "at least one app is required");
}

void Loader::load_app(const Field& self, AppConfig& app) {
  static const std::vector<std::string_view> kLiveKeys = {
      "gop_cache",     "gop_cache_max_frames", "gop_cache_max_bytes", "wait_for_publisher",
      "publish_allow", "publish_token",        "record",              "record_path"};
  static const std::vector<std::string_view> kVodKeys = {"root"};
  std::vector<std::string_view> known = {"type"};
  known.insert(known.end(), kLiveKeys.begin(), kLiveKeys.end());
  known.insert(known.end(), kVodKeys.begin(), kVodKeys.end());
  Section s(*this, self, known);
  if (!s.valid()) return;

  auto type = s.take("type");
  if (!type) {
    error(self.key.Mark(), child_path(self.path, "type"), "missing (live or vod)");
    return;
  }
  if (!scalar(*type, "live or vod")) return;
  std::string t = lower(type->value.Scalar());
  if (t == "live") {
    app.type = AppType::Live;
  } else if (t == "vod") {
    app.type = AppType::Vod;
  } else {
    error(*type, "must be live or vod (got " + in_quotes(type->value.Scalar()) + ")");
    return;
  }
  const auto& other_keys = app.type == AppType::Live ? kVodKeys : kLiveKeys;
  for (std::string_view key : other_keys) {
    if (auto f = s.take(key)) {
      error(f->key.Mark(), f->path,
            std::string("only valid for ") + (app.type == AppType::Live ? "vod" : "live") + " apps (this app is " +
                std::string(app_type_name(app.type)) + ")");
    }
  }

  if (app.type == AppType::Vod) {
    if (auto f = s.take("root")) {
      read_path(*f, app.root);
    } else {
      error(self.key.Mark(), child_path(self.path, "root"), "missing: vod apps need the directory of their files");
    }
    return;
  }

  if (auto f = s.take("gop_cache")) read_bool(*f, app.gop_cache);
  if (auto f = s.take("gop_cache_max_frames")) read_uint(*f, app.gop_cache_max_frames, 1, 1'000'000);
  if (auto f = s.take("gop_cache_max_bytes")) read_size(*f, app.gop_cache_max_bytes, 64 * kKiB, kGiB);
  if (auto f = s.take("wait_for_publisher")) read_bool(*f, app.wait_for_publisher);
  if (auto f = s.take("publish_allow")) read_cidrs(*f, app.publish_allow);
  if (auto f = s.take("publish_token")) {
    std::string token;
    if (read_string(*f, token)) {
      if (!token_chars_ok(token, "")) {
        error(*f, "may only use letters, digits, '-', '.', '_' and '~' (it travels in the stream name as ?token=)");
      } else {
        app.publish_token = token;
      }
    }
  }
  auto record = s.take("record");
  if (record) read_bool(*record, app.record);
  if (auto f = s.take("record_path")) read_path(*f, app.record_path);
  if (app.record && app.record_path.empty()) {
    error(*record, "record: true needs record_path (the directory for the recordings)");
  }
}

void Loader::load_http(const Field& self, HttpConfig& http) {
  Section s(*this, self, {"enabled", "listen", "api", "upload"});
  if (auto f = s.take("enabled")) read_bool(*f, http.enabled);
  if (auto f = s.take("listen")) read_listen(*f, http.listen);
  if (auto api = s.take("api")) {
    Section a(*this, *api, {"allow"});
    if (auto f = a.take("allow")) read_cidrs(*f, http.api_allow);
  }
  if (auto upload = s.take("upload")) {
    Section u(*this, *upload, {"token", "max_size", "extensions"});
    if (auto f = u.take("token")) {
      std::string token;
      if (read_string(*f, token)) {
        // RFC 6750 token68: it is sent as "Authorization: Bearer <token>".
        size_t end = token.find_last_not_of('=');
        std::string_view body = std::string_view(token).substr(0, end == std::string::npos ? 0 : end + 1);
        if (!token.empty() && (body.empty() || !token_chars_ok(body, "+/"))) {
          error(*f, "may only use letters, digits, '-', '.', '_', '~', '+', '/' and trailing '=' (a bearer token)");
        } else {
          http.upload_token = token;
        }
      }
    }
    if (auto f = u.take("max_size")) read_size(*f, http.upload_max_size, 1, 16 * (kGiB << 10));
    if (auto f = u.take("extensions")) {
      std::vector<std::string> list;
      if (read_string_list(*f, list)) {
        bool ok = true;
        for (std::string& ext : list) {
          if (!ext.empty() && ext.front() == '.') ext.erase(0, 1);
          ext = lower(ext);
          if (ext.empty() || !std::all_of(ext.begin(), ext.end(), [](char c) {
                return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
              })) {
            error(*f, "extensions are letters and digits, like mp4 (got " + in_quotes(ext) + ")");
            ok = false;
          }
        }
        if (ok) {
          http.upload_extensions.clear();
          for (std::string& ext : list) {  // Drop repeats, keep the order given.
            auto& out = http.upload_extensions;
            if (std::find(out.begin(), out.end(), ext) == out.end()) out.push_back(std::move(ext));
          }
        }
      }
    }
  }
}

void Loader::load_log(const Field& self, LogConfig& log) {
  Section s(*this, self, {"level", "format"});
  if (auto f = s.take("level")) {
    if (scalar(*f, "error, warn, info or debug")) {
      std::string v = lower(f->value.Scalar());
      if (v == "error") {
        log.level = LogLevel::Error;
      } else if (v == "warn" || v == "warning") {
        log.level = LogLevel::Warn;
      } else if (v == "info") {
        log.level = LogLevel::Info;
      } else if (v == "debug") {
        log.level = LogLevel::Debug;
      } else {
        error(*f, "must be error, warn, info or debug (got " + in_quotes(f->value.Scalar()) + ")");
      }
    }
  }
  if (auto f = s.take("format")) {
    if (scalar(*f, "text or json")) {
      std::string v = lower(f->value.Scalar());
      if (v == "text") {
        log.format = LogFormat::Text;
      } else if (v == "json") {
        log.format = LogFormat::Json;
      } else {
        error(*f, "must be text or json (got " + in_quotes(f->value.Scalar()) + ")");
      }
    }
  }
}

// Two listeners that cannot both bind: the same port and family, and the same address or a
// wildcard (0.0.0.0, ::) on either side. Port 0 (kernel-chosen) never conflicts. IPv4 against IPv6
// is not flagged: the server is expected to bind IPv6 addresses IPv6-only (UV_TCP_IPV6ONLY), so
// 0.0.0.0:1935 and [::]:1935 coexist.
void Loader::check_listeners(const Config& cfg) {
  struct Entry {
    ListenAddress address;
    const char* section;
  };
  std::vector<Entry> all;
  for (const auto& a : cfg.rtmp.listen) all.push_back({a, "rtmp.listen"});
  if (cfg.http.enabled) {
    for (const auto& a : cfg.http.listen) all.push_back({a, "http.listen"});
  }
  auto wildcard = [](const ListenAddress& a) { return a.host == "0.0.0.0" || a.host == "::"; };
  for (size_t j = 0; j < all.size(); ++j) {
    for (size_t i = 0; i < j; ++i) {
      const ListenAddress& a = all[i].address;
      const ListenAddress& b = all[j].address;
      if (a.port == 0 || a.port != b.port || a.is_ipv6() != b.is_ipv6()) continue;
      if (!(a == b) && !wildcard(a) && !wildcard(b)) continue;
      // Place the message on the later address if the file spelled it out, else on the earlier.
      auto find_site = [&](const ListenAddress& x, const char* section) {
        return std::find_if(listen_sites_.rbegin(), listen_sites_.rend(), [&](const ListenSite& site) {
          return site.address == x && site.path.rfind(section, 0) == 0;
        });
      };
      auto site = find_site(b, all[j].section);
      if (site == listen_sites_.rend()) site = find_site(a, all[i].section);
      YAML::Mark mark = site != listen_sites_.rend() ? site->mark : YAML::Mark::null_mark();
      std::string path = site != listen_sites_.rend() ? site->path : std::string(all[j].section);
      error(mark, path, b.to_string() + " (" + all[j].section + ") overlaps " + a.to_string() + " (" +
                            all[i].section + "): both cannot listen on port " + std::to_string(a.port));
    }
  }
}

// "(IPv6 listen addresses must be quoted)" when a syntax error sits on a line like "listen: [::]:1935".
std::string syntax_hint(std::string_view yaml, int line) {
  std::istringstream in{std::string(yaml)};
  std::string text;
  for (int i = 0; i <= line && std::getline(in, text); ++i) {
  }
  size_t open = text.find('[');
  size_t close = text.find("]:", open == std::string::npos ? 0 : open);
  if (open != std::string::npos && close != std::string::npos &&
      text.find_first_not_of("0123456789abcdefABCDEF:.", open + 1) == close) {
    return " (an IPv6 address in brackets must be quoted: \"[::]:1935\")";
  }
  return "";
}

std::string join_errors(const std::vector<std::string>& errors) {
  std::string out;
  for (size_t i = 0; i < errors.size() && i < kMaxErrors; ++i) {
    if (i) out += "\n";
    out += errors[i];
  }
  if (errors.size() > kMaxErrors) out += "\n... and " + std::to_string(errors.size() - kMaxErrors) + " more errors";
  return out;
}

std::string absolute_dir(const std::string& dir) {
  std::error_code ec;
  fs::path p = dir.empty() ? fs::current_path(ec) : fs::absolute(fs::path(dir), ec);
  if (ec) p = fs::path(dir.empty() ? "." : dir);
  std::string s = p.lexically_normal().string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

}  // namespace

Result<Config> load_string(std::string_view yaml, const std::string& source_name, const std::string& base_dir) {
  std::string base = absolute_dir(base_dir);
  try {
    YAML::Node root;
    try {
      root = YAML::Load(std::string(yaml));
    } catch (const YAML::ParserException& e) {
      std::string where = source_name;
      if (e.mark.line >= 0) where += ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1);
      return Error(Errc::Config, where + ": YAML syntax error: " + e.msg + syntax_hint(yaml, e.mark.line));
    }
    Loader loader(source_name, base);
    Config cfg = loader.load(root);
    if (!loader.errors().empty()) return Error(Errc::Config, join_errors(loader.errors()));
    cfg.source = source_name;
    cfg.base_dir = base;
    return cfg;
  } catch (const YAML::Exception& e) {
    std::string where = source_name;
    if (e.mark.line >= 0) where += ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1);
    return Error(Errc::Config, where + ": " + e.msg);
  } catch (const std::exception& e) {
    return Error(Errc::Config, source_name + ": " + e.what());
  }
}

Result<Config> load_file(const std::string& path) {
  std::error_code ec;
  auto status = fs::status(path, ec);
  if (ec) return Error(Errc::Config, path + ": cannot read config file: " + ec.message());
  if (fs::is_directory(status)) return Error(Errc::Config, path + ": is a directory, not a config file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error(Errc::Config, path + ": cannot read config file: " + std::strerror(errno));
  auto size = fs::file_size(path, ec);
  if (!ec && size > kMaxFileSize) {
    return Error(Errc::Config, path + ": config file too large (" + std::to_string(size) + " bytes, at most 1MiB)");
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Error(Errc::Config, path + ": cannot read config file: " + std::strerror(errno));
  fs::path abs = fs::absolute(fs::path(path), ec);
  std::string dir = ec ? std::string(".") : abs.parent_path().string();
  return load_string(text.str(), path, dir);
}

Result<Config> load_default() { return load_string(default_config_yaml(), std::string(kEmbeddedSourceName), ""); }

}  // namespace sluice::config
