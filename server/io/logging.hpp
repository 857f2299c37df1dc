// Server logging: spdlog behind a tiny facade, structured "key=value" lines with a connection id.
// protocol/ and media/ never log; they return errors that the server turns into these lines.
#pragma once

#include <spdlog/spdlog.h>

#include <string>
#include <string_view>

#include "config/config.hpp"

namespace sluice::server {

void init_logging(const config::LogConfig& cfg);
// A reload: the least severe level logged from now on (log.format needs a restart).
void set_log_level(config::LogLevel level);

// A peer-supplied string made safe for one log line: control bytes, quotes, backslashes and
// non-ASCII become \xNN, and it is cut at max_bytes (with "...").
std::string printable(std::string_view s, size_t max_bytes = 120);

}  // namespace sluice::server

#define SLUICE_LOG_ERROR(...) spdlog::error(__VA_ARGS__)
#define SLUICE_LOG_WARN(...) spdlog::warn(__VA_ARGS__)
#define SLUICE_LOG_INFO(...) spdlog::info(__VA_ARGS__)
#define SLUICE_LOG_DEBUG(...) spdlog::debug(__VA_ARGS__)
// Debug when `quiet`, info otherwise: for lines a client can make many times a second.
#define SLUICE_LOG_INFO_UNLESS(quiet, ...) \
  spdlog::log((quiet) ? spdlog::level::debug : spdlog::level::info, __VA_ARGS__)
