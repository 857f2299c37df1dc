// %XX escapes decoded once (not '+': a form's space is its caller's business), for every parser
// of URLs and queries: the access checks' queries, HTTP paths, relay URLs, the bench's srt:// URLs.
#pragma once

#include <string>
#include <string_view>

namespace sluice {

// False on a malformed escape (a '%' without two hex digits after it).
inline bool percent_decode(std::string_view in, std::string& out) {
  const auto hex = [](char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  out.clear();
  out.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] != '%') {
      out.push_back(in[i]);
      continue;
    }
    if (i + 2 >= in.size()) return false;
    const int hi = hex(in[i + 1]), lo = hex(in[i + 2]);
    if (hi < 0 || lo < 0) return false;
    out.push_back(static_cast<char>(hi * 16 + lo));
    i += 2;
  }
  return true;
}

}  // namespace sluice
