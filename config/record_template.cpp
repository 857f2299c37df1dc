#include "config/record_template.hpp"

#include <ctime>
#include <string_view>

namespace sluice::config {

namespace {

constexpr std::string_view kConversions = "YymdeHIMSjuwVGaAbBpFTs%";

bool is_variable(std::string_view name) { return name == "app" || name == "stream" || name == "seq"; }

}  // namespace

bool is_confined_relative_path(std::string_view path) {
  if (path.empty() || path.front() == '/') return false;
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) slash = path.size();
    const std::string_view part = path.substr(start, slash - start);
    if (part.empty() || part == "." || part == "..") return false;
    start = slash + 1;
  }
  return path.find('\0') == std::string_view::npos;
}

std::string check_record_template(std::string_view tmpl) {
  if (tmpl.empty()) return "must not be empty";
  if (tmpl.size() > 512) return "must be at most 512 bytes";
  if (tmpl.front() == '/') return "must be relative to record.dir (no leading '/')";
  bool names_stream = false;
  for (size_t i = 0; i < tmpl.size(); ++i) {
    const char c = tmpl[i];
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f || c == '\\') {
      return "must not contain control characters or '\\'";
    }
    if (c == '%') {
      if (i + 1 >= tmpl.size() || kConversions.find(tmpl[i + 1]) == std::string_view::npos) {
        return "unknown time conversion " + std::string(tmpl.substr(i, 2)) + " (use %Y %m %d %H %M %S ...)";
      }
      ++i;
    } else if (c == '{') {
      const size_t close = tmpl.find('}', i);
      if (close == std::string_view::npos) return "unclosed '{'";
      const std::string_view name = tmpl.substr(i + 1, close - i - 1);
      if (!is_variable(name)) return "unknown variable {" + std::string(name) + "} (use {app}, {stream}, {seq})";
      names_stream = names_stream || name == "stream";
      i = close;
    } else if (c == '}') {
      return "'}' without '{'";
    }
  }
  if (!names_stream) return "must contain {stream} (two streams would otherwise share names)";
  if (!is_confined_relative_path(tmpl)) return "must not have an empty, \".\" or \"..\" component";
  return {};
}

std::string expand_record_template(std::string_view tmpl, const RecordNameParts& parts) {
  std::time_t t = static_cast<std::time_t>(parts.start_unix);
  std::tm tm{};
  gmtime_r(&t, &tm);
  std::string out;
  for (size_t i = 0; i < tmpl.size(); ++i) {
    const char c = tmpl[i];
    if (c == '%' && i + 1 < tmpl.size()) {
      const char fmt[3] = {'%', tmpl[i + 1], 0};
      char buf[64];
      const size_t n = std::strftime(buf, sizeof buf, fmt, &tm);
      out.append(buf, n);
      ++i;
    } else if (c == '{') {
      const size_t close = tmpl.find('}', i);
      if (close == std::string_view::npos) break;
      const std::string_view name = tmpl.substr(i + 1, close - i - 1);
      if (name == "app") {
        out += parts.app;
      } else if (name == "stream") {
        for (char s : parts.stream) out += s == '/' ? '_' : s;
      } else if (name == "seq") {
        out += std::to_string(parts.seq);
      }
      i = close;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace sluice::config
