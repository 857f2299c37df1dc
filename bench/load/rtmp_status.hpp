// Reading the server's answers the same way in players and publishers: which onStatus / _error
// replies end a client, and how to name them in a failure reason.
#pragma once

#include <string>
#include <string_view>

#include "protocol/session.hpp"

namespace sluice::bench {

// level "error", or a code servers send with a wrong level (some send StreamNotFound as status).
inline bool is_error_status(const protocol::StatusEvent& e) {
  if (e.level() == "error") return true;
  const std::string code = e.code();
  for (std::string_view bad : {"StreamNotFound", ".Failed", ".Rejected", ".BadName", ".Forbidden"}) {
    if (code.find(bad) != std::string::npos) return true;
  }
  return false;
}

inline std::string describe_status(const protocol::StatusEvent& e) {
  std::string text = e.code().empty() ? e.name : e.code();
  const std::string description = e.info.get_string("description");
  if (!description.empty()) text += " (" + description + ")";
  return text;
}

// "_error connect: NetConnection.Connect.Rejected (...)".
inline std::string describe_result_error(const protocol::ResultEvent& e, std::string_view request) {
  std::string text = "_error " + std::string(request);
  for (const auto& arg : e.command.args) {
    if (!arg.is_object_like()) continue;
    text += ": " + arg.get_string("code");
    const std::string description = arg.get_string("description");
    if (!description.empty()) text += " (" + description + ")";
    break;
  }
  return text;
}

}  // namespace sluice::bench
