#include "config/access_log_schema.hpp"

#include <yaml-cpp/yaml.h>

#include <string>

namespace sluice::config {

void load_access_log(FieldReader& r, const Field& self, AccessLogConfig& access_log) {
  Section s(r, self, {"path", "format"});
  if (!s.valid()) return;
  if (auto f = s.take("path")) {
    std::string text;
    if (r.read_string(*f, text)) {
      if (text.empty() || text == AccessLogConfig::kStderr) {
        access_log.path = text;  // off, or standard error
      } else if (text.back() == '/') {
        r.error(*f, "names a directory; give a file (e.g. " + text + "access.log)");
      } else {
        r.read_path(*f, access_log.path);  // relative to the configuration file's directory
      }
    }
  }
  if (auto f = s.take("format")) {
    r.read_choice(
        *f, "combined, common or json",
        {{"combined", AccessLogFormat::Combined}, {"common", AccessLogFormat::Common}, {"json", AccessLogFormat::Json}},
        access_log.format);
  }
}

void emit_access_log(YAML::Emitter& out, const AccessLogConfig& access_log) {
  if (!access_log.enabled()) return;
  out << YAML::Key << "access_log" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "path" << YAML::Value << access_log.path;
  out << YAML::Key << "format" << YAML::Value << std::string(access_log_format_name(access_log.format));
  out << YAML::EndMap;
}

}  // namespace sluice::config
