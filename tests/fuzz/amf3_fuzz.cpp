// libFuzzer target for the AMF3 decoder and encoder.
// Properties: no crash or sanitizer report on any input; the values decoded before the first
// error, encoded with one encoder (shared reference tables, as in one message), decode again to
// equal values.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <vector>

#include "protocol/amf3.hpp"

using namespace sluice;
using namespace sluice::protocol;
using namespace sluice::protocol::amf;

namespace {

[[noreturn]] void fail(const char* what, const std::vector<Value>& values) {
  std::fprintf(stderr, "amf3 round trip: %s\n", what);
  for (const auto& v : values) std::fprintf(stderr, "  %s\n", v.to_debug_string().c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ByteReader in(std::span<const uint8_t>(data, size));
  Amf3Decoder decoder;
  std::vector<Value> first;
  while (!in.empty()) {
    auto v = decoder.decode(in);
    if (!v) break;
    first.push_back(std::move(*v));
  }

  std::vector<uint8_t> encoded;
  Amf3Encoder encoder;
  for (const auto& v : first) encoder.encode(v, encoded);

  ByteReader again(encoded);
  Amf3Decoder second_decoder;
  for (const auto& expected : first) {
    auto v = second_decoder.decode(again);
    if (!v) fail(v.error().message().c_str(), first);
    if (!(*v == expected)) fail("values differ after encode -> decode", first);
  }
  if (!again.empty()) fail("bytes left over after decoding the re-encoded values", first);
  return 0;
}
