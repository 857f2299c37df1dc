#include "config/config.hpp"

namespace sluice::config {

std::string_view app_type_name(AppType type) {
  switch (type) {
    case AppType::Live: return "live";
    case AppType::Vod: return "vod";
  }
  return "live";
}

std::string_view publish_conflict_name(PublishConflict p) {
  switch (p) {
    case PublishConflict::Takeover: return "takeover";
    case PublishConflict::Reject: return "reject";
  }
  return "takeover";
}

std::string_view log_level_name(LogLevel level) {
  switch (level) {
    case LogLevel::Error: return "error";
    case LogLevel::Warn: return "warn";
    case LogLevel::Info: return "info";
    case LogLevel::Debug: return "debug";
  }
  return "info";
}

std::string_view log_format_name(LogFormat format) {
  switch (format) {
    case LogFormat::Text: return "text";
    case LogFormat::Json: return "json";
  }
  return "text";
}

const AppConfig* Config::find_app(std::string_view name) const {
  for (const AppConfig& app : apps) {
    if (app.name == name) return &app;
  }
  return nullptr;
}

}  // namespace sluice::config
