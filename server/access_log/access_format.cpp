#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <ctime>

#include "server/access_log/access_record.hpp"

namespace sluice::server {

namespace {

// A peer chooses names, agents and paths: each field is cut here so that one line stays bounded.
constexpr size_t kMaxField = 2048;

constexpr char kHexUpper[] = "0123456789ABCDEF";
constexpr char kHexLower[] = "0123456789abcdef";

// nginx's escaping of a variable in a log line (escape=default): '"', '\\', control bytes and
// bytes from 0x7F become \xHH, so a name or an agent can neither end the field nor the line.
// escape_space: in the request's target, whose spaces would make the request more than its
// three words (an RTMP stream name may hold one; an HTTP path cannot).
void append_clf(std::string& out, std::string_view s, bool escape_space = false) {
  if (s.empty()) {
    out += '-';
    return;
  }
  const size_t n = std::min(s.size(), kMaxField);
  for (size_t i = 0; i < n; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c >= 0x7F || c == '"' || c == '\\' || (escape_space && c == ' ')) {
      out += "\\x";
      out += kHexUpper[c >> 4];
      out += kHexUpper[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  if (s.size() > n) out += "...";
}

// The length of the valid UTF-8 sequence at s[i], or 0 when the bytes there are not one.
size_t utf8_length(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0; };
  const auto cont = [&](size_t k) { return (b(k) & 0xC0) == 0x80; };
  const unsigned char c = b(0);
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    const unsigned char lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    return b(1) >= lo && b(1) <= hi && cont(2) ? 3 : 0;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    const unsigned char lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    return b(1) >= lo && b(1) <= hi && cont(2) && cont(3) ? 4 : 0;
  }
  return 0;
}

// A JSON string: valid UTF-8 passes, a byte that is not part of any becomes U+FFFD, control bytes
// and DEL are \u00XX.
void append_json_string(std::string& out, std::string_view s) {
  out += '"';
  const size_t n = std::min(s.size(), kMaxField);
  for (size_t i = 0; i < n;) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
      ++i;
    } else if (c < 0x20 || c == 0x7F) {
      out += "\\u00";
      out += kHexLower[c >> 4];
      out += kHexLower[c & 15];
      ++i;
    } else if (c < 0x80) {
      out += static_cast<char>(c);
      ++i;
    } else if (size_t len = utf8_length(s, i); len != 0 && i + len <= n) {
      out.append(s.substr(i, len));
      i += len;
    } else {
      out += "\\ufffd";
      ++i;
    }
  }
  if (s.size() > n) out += "...";
  out += '"';
}

void append_key(std::string& out, const char* key) {
  out += ",\"";
  out += key;
  out += "\":";
}

// nginx's $request_time: seconds with millisecond resolution.
void append_seconds(std::string& out, uint64_t ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%llu.%03llu", static_cast<unsigned long long>(ms / 1000),
                static_cast<unsigned long long>(ms % 1000));
  out += buf;
}

std::tm broken_down(int64_t unix_s) {
  const auto t = static_cast<std::time_t>(unix_s);
  std::tm tm{};
  gmtime_r(&t, &tm);
  return tm;
}

int64_t floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

// [10/Oct/2000:13:55:36 -0700]: English month names whatever the locale, as nginx writes them.
void append_clf_time(std::string& out, int64_t unix_ms, long utc_offset_s) {
  static constexpr std::array<const char*, 12> kMonths = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                          "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  const std::tm tm = broken_down(floor_div(unix_ms, 1000) + utc_offset_s);
  const long off = utc_offset_s < 0 ? -utc_offset_s : utc_offset_s;
  char buf[64];
  std::snprintf(buf, sizeof buf, "[%02d/%s/%04d:%02d:%02d:%02d %c%02ld%02ld]", tm.tm_mday, kMonths[tm.tm_mon % 12],
                tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec, utc_offset_s < 0 ? '-' : '+', off / 3600,
                off % 3600 / 60);
  out += buf;
}

void append_iso_time(std::string& out, int64_t unix_ms) {
  const std::tm tm = broken_down(floor_div(unix_ms, 1000));
  char buf[64];
  std::snprintf(buf, sizeof buf, "\"%04d-%02d-%02dT%02d:%02d:%02d.%03dZ\"", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int>(unix_ms - floor_div(unix_ms, 1000) * 1000));
  out += buf;
}

std::string format_clf(const AccessRecord& rec, bool combined, long utc_offset_s) {
  std::string out;
  out.reserve(256);
  append_clf(out, rec.client);
  out += " - - ";
  append_clf_time(out, rec.unix_ms, utc_offset_s);
  out += " \"";
  if (rec.method.empty()) {
    out += '-';  // a request that never parsed
  } else {
    append_clf(out, rec.method);
    out += ' ';
    append_clf(out, rec.target, true);
    out += ' ';
    append_clf(out, rec.protocol);
  }
  out += "\" " + std::to_string(rec.status) + " " + std::to_string(rec.bytes_out) + " ";
  if (combined) {
    out += '"';
    append_clf(out, rec.referer);
    out += "\" \"";
    append_clf(out, rec.user_agent);
    out += "\" ";
  }
  append_seconds(out, rec.duration_ms);
  return out;
}

std::string format_json(const AccessRecord& rec) {
  std::string out;
  out.reserve(320);
  out += "{\"time\":";
  append_iso_time(out, rec.unix_ms);
  append_key(out, "kind");
  out += rec.kind == AccessRecord::Kind::Http ? "\"http\"" : "\"session\"";
  append_key(out, "conn");
  out += std::to_string(rec.conn);
  const std::pair<const char*, const std::string*> strings[] = {{"client", &rec.client}, {"method", &rec.method},
                                                                {"target", &rec.target}, {"protocol", &rec.protocol},
                                                                {"app", &rec.app},       {"stream", &rec.stream}};
  for (const auto& [key, value] : strings) {
    append_key(out, key);
    append_json_string(out, *value);
  }
  append_key(out, "status");
  out += std::to_string(rec.status);
  append_key(out, "reason");
  append_json_string(out, rec.reason);
  append_key(out, "bytes_in");
  out += std::to_string(rec.bytes_in);
  append_key(out, "bytes_out");
  out += std::to_string(rec.bytes_out);
  append_key(out, "duration");
  append_seconds(out, rec.duration_ms);
  append_key(out, "referer");
  append_json_string(out, rec.referer);
  append_key(out, "user_agent");
  append_json_string(out, rec.user_agent);
  out += '}';
  return out;
}

bool has(std::string_view text, std::string_view what) { return text.find(what) != std::string_view::npos; }

}  // namespace

int access_session_status(std::string_view reason) {
  std::string r(reason);
  std::transform(r.begin(), r.end(), r.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  // In this order: "output not read for 30 s (rtmp.limits.output_timeout)" is a timeout, not a limit.
  if (has(r, "server stop") || has(r, "server is stopping") || has(r, "shutting down")) return 503;
  if (has(r, "replaced")) return 409;
  if (has(r, "timeout") || has(r, "timed out") || has(r, "sent nothing")) return 408;
  if (has(r, "protocol error") || has(r, "bad stream id") || has(r, "tls:") || has(r, "srtp:") || has(r, "invalid")) {
    return 400;
  }
  if (has(r, "refused") || has(r, "not allowed") || has(r, "through the api") || has(r, "lifetime")) return 403;
  if (has(r, "limit") || has(r, "too many") || has(r, "too slow") || has(r, "budget") || has(r, "max_")) return 429;
  if (has(r, "no app") || has(r, "not found") || has(r, "no stream")) return 404;
  return 200;
}

std::string access_client(std::string_view peer) {
  if (peer.starts_with('[')) {
    const size_t end = peer.find(']');
    return std::string(end == std::string_view::npos ? peer : peer.substr(1, end - 1));
  }
  const size_t colon = peer.rfind(':');
  // One colon: IPv4 with a port. More: an IPv6 address without brackets, which has no port.
  if (colon != std::string_view::npos && peer.find(':') == colon) return std::string(peer.substr(0, colon));
  return std::string(peer);
}

std::string access_url_host(std::string_view url) {
  const size_t scheme = url.find("://");
  if (scheme == std::string_view::npos) return {};
  const std::string_view rest = url.substr(scheme + 3);
  return std::string(rest.substr(0, rest.find_first_of("/?#")));
}

std::string format_access_line(const AccessRecord& rec, config::AccessLogFormat format, long utc_offset_s) {
  switch (format) {
    case config::AccessLogFormat::Common: return format_clf(rec, false, utc_offset_s);
    case config::AccessLogFormat::Json: return format_json(rec);
    case config::AccessLogFormat::Combined: break;
  }
  return format_clf(rec, true, utc_offset_s);
}

}  // namespace sluice::server
