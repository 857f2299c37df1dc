// libFuzzer target for the AMF0 decoder (with its 0x11 switch to AMF3).
// Properties: no crash or sanitizer report on any input, and whatever decodes must encode and
// decode again to an equal value (gortmplib's "if Read succeeds, Marshal must succeed").
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <vector>

#include "protocol/amf0.hpp"

using namespace sluice;
using namespace sluice::protocol::amf;

namespace {

[[noreturn]] void fail(const char* what, const std::vector<Value>& values) {
  std::fprintf(stderr, "amf0 round trip: %s\n", what);
  for (const auto& v : values) std::fprintf(stderr, "  %s\n", v.to_debug_string().c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto first = decode_amf0_all(std::span<const uint8_t>(data, size));
  if (!first) return 0;

  std::vector<uint8_t> encoded;
  for (const auto& v : *first) encode_amf0(v, encoded);

  auto second = decode_amf0_all(encoded);
  if (!second) fail(second.error().message().c_str(), *first);
  if (*second != *first) fail("values differ after encode -> decode", *first);
  return 0;
}
