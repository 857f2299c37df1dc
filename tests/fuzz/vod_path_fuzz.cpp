// VOD names and the path components a confined open walks (server/vod/path.hpp), on arbitrary
// bytes. Properties: no crash; whatever vod_relative_path() accepts, confined_components() accepts
// too (every name that names a file can be walked); every component is a plain name (not empty,
// ".", "..", no '/' or NUL, at most 255 bytes) and the components joined by '/' give the path back.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "server/vod/path.hpp"

using namespace sluice;
using namespace sluice::server;

namespace {

void check_components(std::string_view rel) {
  auto parts = confined_components(rel);
  if (!parts) return;
  std::string joined;
  for (std::string_view p : *parts) {
    if (p.empty() || p == "." || p == ".." || p.size() > kMaxComponentBytes) std::abort();
    if (p.find('/') != std::string_view::npos || p.find('\0') != std::string_view::npos) std::abort();
    if (!joined.empty()) joined += '/';
    joined += p;
  }
  if (joined != rel) std::abort();
}

size_t longest_component(std::string_view rel) {
  size_t start = 0, longest = 0;
  while (start <= rel.size()) {
    size_t end = rel.find('/', start);
    if (end == std::string_view::npos) end = rel.size();
    longest = std::max(longest, end - start);
    start = end + 1;
  }
  return longest;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  check_components(in);
  auto rel = vod_relative_path(in);
  if (rel) {
    // Only a component over the file system's limit may make a valid name unwalkable.
    if (!confined_components(*rel) && longest_component(*rel) <= kMaxComponentBytes) std::abort();
    check_components(*rel);
    (void)vod_container_of(*rel);
  }
  return 0;
}
