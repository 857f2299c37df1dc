// The schema of the access settings (config/access.hpp, docs/security.md).
#include "config/access_schema.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace sluice::config {

namespace {

// Keys and secrets travel in URLs and HTTP headers: visible ASCII, no spaces.
bool visible_ascii(std::string_view s) {
  for (char c : s) {
    if (c <= ' ' || c > '~') return false;
  }
  return true;
}

constexpr size_t kMaxKeyBytes = 256;
constexpr size_t kMinSecretBytes = 16;

bool read_text_file(const std::string& path, std::string& out, std::string& why) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    why = "cannot read " + in_quotes(path);
    return false;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  if (out.size() > 1024 * 1024) {
    why = in_quotes(path) + " is larger than 1 MiB";
    return false;
  }
  return true;
}

// A key naming a file (keys_file, stream_keys_file, secret_file): its path and its text, or an
// error on the key.
bool read_file_field(FieldReader& r, const Field& f, std::string& path, std::string& text) {
  if (!r.read_path(f, path)) return false;
  std::string why;
  if (read_text_file(path, text, why)) return true;
  r.error(f, why);
  return false;
}

std::string trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(b, e - b + 1));
}

// Keys of a file (one a line, '#' comments) or a variable (separated by commas or spaces).
std::vector<std::string> split_keys(std::string_view text, bool lines) {
  std::vector<std::string> keys;
  std::string cur;
  auto flush = [&] {
    std::string k = trim(cur);
    if (!k.empty() && k.front() != '#') keys.push_back(std::move(k));
    cur.clear();
  };
  for (char c : text) {
    bool sep = lines ? (c == '\n') : (c == ',' || c == ' ' || c == '\t' || c == '\n');
    if (sep) {
      flush();
    } else {
      cur.push_back(c);
    }
  }
  flush();
  return keys;
}

bool check_key(FieldReader& r, const Field& f, const std::string& key, std::string_view where) {
  if (key.empty() || key.size() > kMaxKeyBytes || !visible_ascii(key)) {
    r.error(f, std::string(where) + ": keys are 1.." + std::to_string(kMaxKeyBytes) +
                   " visible ASCII characters without spaces");
    return false;
  }
  return true;
}

void add_keys(FieldReader& r, const Field& f, std::vector<std::string> found, std::string origin, AccessRules& rules) {
  if (found.empty()) {
    r.error(f, origin + " holds no key");
    return;
  }
  for (const std::string& k : found) {
    if (!check_key(r, f, k, origin)) return;
  }
  rules.key_origins.push_back(found.size() == 1 ? origin : origin + " (" + std::to_string(found.size()) + " keys)");
  rules.keys.insert(rules.keys.end(), found.begin(), found.end());
}

void load_signed(FieldReader& r, const Field& self, SignedUrlConfig& out) {
  Section s(r, self, {"secret", "secret_file", "secret_env", "skew"});
  if (!s.valid()) return;
  load_secret(r, s, self, "secret", out.secret);
  if (!out.secret.value.empty() && out.secret.value.size() < kMinSecretBytes) {
    r.error(self, "the secret (" + out.secret.origin + ") must be at least " + std::to_string(kMinSecretBytes) +
                      " bytes (e.g. openssl rand -hex 32)");
    out.secret = {};
  } else if (out.secret.value.empty()) {
    r.error(self.key.mark(), self.path, "needs secret, secret_file or secret_env");
  }
  if (auto f = s.take("skew")) r.read_duration(*f, out.skew, Duration(0), std::chrono::hours(24), true);
}

bool hook_url_ok(std::string_view url) {
  return (url.starts_with("http://") || url.starts_with("https://")) && visible_ascii(url) && url.size() < 2048;
}

}  // namespace

void load_secret(FieldReader& r, const Section& s, const Field& self, std::string_view key, Secret& out) {
  std::string k(key);
  auto inline_f = s.take(k);
  auto file_f = s.take(k + "_file");
  auto env_f = s.take(k + "_env");
  int given = (inline_f ? 1 : 0) + (file_f ? 1 : 0) + (env_f ? 1 : 0);
  if (given == 0) return;
  if (given > 1) {
    r.error(self.key.mark(), self.path, "give only one of " + k + ", " + k + "_file and " + k + "_env");
    return;
  }
  Secret got;
  if (inline_f) {
    if (!r.read_string(*inline_f, got.value)) return;
    got.origin = "inline";
    if (got.value.empty()) return;  // "" means not set
  } else if (file_f) {
    std::string path, text;
    if (!read_file_field(r, *file_f, path, text)) return;
    got.value = trim(text);
    got.origin = "file " + path;
    if (got.value.empty()) return r.error(*file_f, in_quotes(path) + " is empty");
  } else {
    std::string name;
    if (!r.read_string(*env_f, name)) return;
    const char* v = std::getenv(name.c_str());
    if (!v || !*v) return r.error(*env_f, "the environment variable " + name + " is not set");
    got.value = trim(v);
    got.origin = "env " + name;
  }
  if (!visible_ascii(got.value)) {
    const Field& f = inline_f ? *inline_f : file_f ? *file_f : *env_f;
    return r.error(f, "secrets are visible ASCII characters without spaces (" + got.origin + ")");
  }
  out = std::move(got);
}

void load_access_rules(FieldReader& r, const Field& self, AccessRules& rules) {
  Section s(r, self, {"allow", "deny", "keys", "keys_file", "keys_env", "stream_keys", "stream_keys_file", "signed"});
  if (!s.valid()) return;
  if (auto f = s.take("allow")) r.read_cidrs(*f, rules.allow);
  if (auto f = s.take("deny")) r.read_cidrs(*f, rules.deny);
  if (auto f = s.take("keys")) {
    std::vector<std::string> list;
    if (r.read_string_list(*f, list)) add_keys(r, *f, std::move(list), "inline", rules);
  }
  if (auto f = s.take("keys_file")) {
    std::string path, text;
    if (read_file_field(r, *f, path, text)) add_keys(r, *f, split_keys(text, true), "file " + path, rules);
  }
  if (auto f = s.take("keys_env")) {
    std::string name;
    if (r.read_string(*f, name)) {
      const char* v = std::getenv(name.c_str());
      if (!v) {
        r.error(*f, "the environment variable " + name + " is not set");
      } else {
        add_keys(r, *f, split_keys(v, false), "env " + name, rules);
      }
    }
  }
  auto add_stream_key = [&](const Field& f, std::string name, std::string key, const std::string& where) {
    if (name.empty() || !check_key(r, f, key, where)) return false;
    rules.stream_keys.emplace_back(std::move(name), std::move(key));
    return true;
  };
  if (auto f = s.take("stream_keys")) {
    if (!f->value.is_map()) {
      r.error(*f, "must be a map of stream name to key (e.g. { cam1: k-7f3a })");
    } else {
      for (const auto& [k, v] : f->value.entries()) {
        Field item{k, v, child_path(f->path, k.is_scalar() ? k.scalar() : "?")};
        std::string key;
        if (!k.is_scalar() || !r.read_string(item, key)) continue;
        add_stream_key(item, k.scalar(), key, "inline");
      }
      rules.stream_keys_origin = "inline";
    }
  }
  if (auto f = s.take("stream_keys_file")) {
    std::string path, text;
    if (read_file_field(r, *f, path, text)) {
      for (const std::string& line : split_keys(text, true)) {
        size_t sp = line.find_first_of(" \t");
        if (sp == std::string::npos) {
          r.error(*f, in_quotes(path) + ": each line is \"<stream name> <key>\"");
          break;
        }
        if (!add_stream_key(*f, line.substr(0, sp), trim(line.substr(sp)), "file " + path)) break;
      }
      rules.stream_keys_origin = "file " + path;
    }
  }
  if (auto f = s.take("signed")) load_signed(r, *f, rules.signed_url);
}

void load_app_limits(FieldReader& r, const Field& self, AppLimits& limits) {
  Section s(r, self, {"publishers", "players", "players_per_stream"});
  if (auto f = s.take("publishers")) r.read_uint(*f, limits.publishers, 0, 10'000'000);
  if (auto f = s.take("players")) r.read_uint(*f, limits.players, 0, 10'000'000);
  if (auto f = s.take("players_per_stream")) r.read_uint(*f, limits.players_per_stream, 0, 10'000'000);
}

void load_hooks(FieldReader& r, const Field& self, HooksConfig& hooks) {
  Section s(r, self,
            {"on_connect", "on_publish", "on_play", "on_publish_done", "on_play_done", "on_record_done",
             "on_stream_alert", "timeout", "fail", "done_attempts", "retry_delay"});
  if (!s.valid()) return;
  auto url = [&](const char* key, std::string& out) {
    auto f = s.take(key);
    if (!f) return;
    std::string v;
    if (!r.read_string(*f, v)) return;
    if (!v.empty() && !hook_url_ok(v)) return r.error(*f, "must be an http:// or https:// URL");
    out = v;
  };
  url("on_connect", hooks.on_connect);
  url("on_publish", hooks.on_publish);
  url("on_play", hooks.on_play);
  url("on_publish_done", hooks.on_publish_done);
  url("on_play_done", hooks.on_play_done);
  url("on_record_done", hooks.on_record_done);
  url("on_stream_alert", hooks.on_stream_alert);
  if (auto f = s.take("timeout")) {
    r.read_duration(*f, hooks.timeout, Duration(10), std::chrono::minutes(1), false);
  }
  if (auto f = s.take("fail")) {
    if (r.scalar(*f, "closed or open")) {
      std::string v = lower(f->value.scalar());
      if (v == "closed") {
        hooks.fail_open = false;
      } else if (v == "open") {
        hooks.fail_open = true;
      } else {
        r.error(*f, "must be closed (deny when a hook does not answer) or open (admit) (got " +
                        in_quotes(f->value.scalar()) + ")");
      }
    }
  }
  if (auto f = s.take("done_attempts")) r.read_uint(*f, hooks.done_attempts, 1, 100);
  if (auto f = s.take("retry_delay")) {
    r.read_duration(*f, hooks.retry_delay, Duration(10), std::chrono::minutes(10), false);
  }
}

void load_connection_limits(FieldReader& r, const Field& self, Config& cfg) {
  Section s(r, self, {"connections", "per_ip"});
  if (auto f = s.take("connections")) r.read_uint(*f, cfg.rtmp.max_connections, 0, 10'000'000);
  if (auto f = s.take("per_ip")) r.read_uint(*f, cfg.limits.per_ip, 0, 10'000'000);
}

}  // namespace sluice::config
