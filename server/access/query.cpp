#include "server/access/query.hpp"

namespace sluice::server {

namespace {

// One form value: '+' is a space, then %XX once.
bool form_decode(std::string_view in, std::string& out) {
  std::string raw(in);
  for (char& c : raw) c = c == '+' ? ' ' : c;
  return percent_decode(raw, out);
}

// Calls f(key, raw value) for each pair until it returns false.
template <class F>
void each_pair(std::string_view query, F&& f) {
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    size_t eq = pair.find('=');
    std::string_view value = eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1);
    if (!pair.empty() && !f(pair.substr(0, eq), value)) return;
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
}

}  // namespace

std::optional<std::string> query_param(std::string_view query, std::string_view key) {
  std::optional<std::string> found;
  each_pair(query, [&](std::string_view k, std::string_view raw) {
    if (k != key) return true;
    std::string value;
    if (form_decode(raw, value)) found = std::move(value);
    return false;
  });
  return found;
}

std::vector<std::pair<std::string, std::string>> query_pairs(std::string_view query, size_t max_pairs) {
  std::vector<std::pair<std::string, std::string>> out;
  each_pair(query, [&](std::string_view k, std::string_view raw) {
    if (out.size() >= max_pairs) return false;
    std::string key, value;
    if (form_decode(k, key) && form_decode(raw, value)) out.emplace_back(std::move(key), std::move(value));
    return true;
  });
  return out;
}

}  // namespace sluice::server
