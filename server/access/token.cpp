#include "server/access/token.hpp"

#include <algorithm>

#include "server/access/query.hpp"

namespace sluice::server {

bool token_equal(std::string_view presented, std::string_view expected) {
  size_t n = std::max(presented.size(), expected.size());
  unsigned diff = presented.size() != expected.size();
  for (size_t i = 0; i < n; ++i) {
    unsigned char x = i < presented.size() ? static_cast<unsigned char>(presented[i]) : 0;
    unsigned char y = i < expected.size() ? static_cast<unsigned char>(expected[i]) : 0;
    diff |= x ^ y;
  }
  return diff == 0;
}

bool query_token_matches(std::string_view query, std::string_view name, std::string_view expected) {
  if (expected.empty()) return true;
  auto presented = query_param(query, name);
  return presented.has_value() && token_equal(*presented, expected);
}

std::string bearer_token(const std::string* authorization) {
  if (!authorization || authorization->size() < 7) return {};
  static constexpr std::string_view kScheme = "bearer ";
  for (size_t i = 0; i < kScheme.size(); ++i) {
    char c = (*authorization)[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != kScheme[i]) return {};
  }
  size_t start = authorization->find_first_not_of(' ', kScheme.size());
  return start == std::string::npos ? std::string() : authorization->substr(start);
}

}  // namespace sluice::server
