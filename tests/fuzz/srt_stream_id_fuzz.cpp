// libFuzzer target for the SRT stream id parser (protocol/srt_stream_id.hpp): arbitrary bytes as
// the id an SRT caller sends.
// Properties: no crash or sanitizer report; a parsed id has an app and a name, the app without a
// '/', neither with a '?' (that is the query's); parsing is the same for the same bytes.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "protocol/srt_stream_id.hpp"
#include "tests/fuzz/fuzz_input.hpp"

using namespace sluice::protocol;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto id = parse_srt_stream_id(text);
  if (!id.ok()) return 0;
  FUZZ_CHECK(!id->app.empty() && !id->name.empty());
  FUZZ_CHECK(id->app.find('/') == std::string::npos);
  FUZZ_CHECK(id->app.find('?') == std::string::npos && id->name.find('?') == std::string::npos);
  FUZZ_CHECK(size <= kMaxSrtStreamId);
  auto again = parse_srt_stream_id(text);
  FUZZ_CHECK(again.ok() && again->query == id->query && again->name == id->name && again->mode == id->mode);
  return 0;
}
