#include "server/io/logging.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>

namespace sluice::server {

void init_logging(const config::LogConfig& cfg) {
  auto logger = spdlog::stderr_color_mt("sluice");
  if (cfg.format == config::LogFormat::Json) {
    logger->set_pattern(R"({"time":"%Y-%m-%dT%H:%M:%S.%e","level":"%l","msg":"%v"})");
  } else {
    logger->set_pattern("%Y-%m-%d %H:%M:%S.%e %^%-5l%$ %v");
  }
  // Lines must reach a log collector promptly, not at exit.
  logger->flush_on(spdlog::level::debug);
  spdlog::set_default_logger(logger);
  set_log_level(cfg.level);
}

void set_log_level(config::LogLevel level) {
  // spdlog keeps the level in an atomic: any loop may log while another sets it.
  switch (level) {
    case config::LogLevel::Error: spdlog::default_logger_raw()->set_level(spdlog::level::err); break;
    case config::LogLevel::Warn: spdlog::default_logger_raw()->set_level(spdlog::level::warn); break;
    case config::LogLevel::Info: spdlog::default_logger_raw()->set_level(spdlog::level::info); break;
    case config::LogLevel::Debug: spdlog::default_logger_raw()->set_level(spdlog::level::debug); break;
  }
}

std::string printable(std::string_view s, size_t max_bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < s.size() && i < max_bytes; ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c >= 0x7F || c == '"' || c == '\\') {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  if (s.size() > max_bytes) out += "...";
  return out;
}

}  // namespace sluice::server
