// Server logging: spdlog behind a tiny facade, structured "key=value" lines with a connection id.
// protocol/ and media/ never log; they return errors that the server turns into these lines.
#pragma once

#include <spdlog/spdlog.h>

#include "config/config.hpp"

namespace sluice::server {

void init_logging(const config::LogConfig& cfg);

}  // namespace sluice::server

#define SLUICE_LOG_ERROR(...) spdlog::error(__VA_ARGS__)
#define SLUICE_LOG_WARN(...) spdlog::warn(__VA_ARGS__)
#define SLUICE_LOG_INFO(...) spdlog::info(__VA_ARGS__)
#define SLUICE_LOG_DEBUG(...) spdlog::debug(__VA_ARGS__)
