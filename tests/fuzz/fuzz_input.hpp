// FuzzInput: reads a libFuzzer input as fields; past its end every read gives zeros (numbers) or
// nothing (bytes), so a target never reads out of bounds and any input is a valid one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>

// A property a fuzz target checks: aborts (what libFuzzer reports as a crash) with the failed
// condition and its line, so that the report says which one.
#define FUZZ_CHECK(ok)                                                                   \
  do {                                                                                   \
    if (!(ok)) {                                                                         \
      std::fprintf(stderr, "%s: check failed: %s (line %d)\n", __FILE__, #ok, __LINE__); \
      std::abort();                                                                      \
    }                                                                                    \
  } while (0)

namespace sluice::fuzz {

struct FuzzInput {
  std::span<const uint8_t> in;
  size_t pos = 0;
  size_t left() const { return in.size() - pos; }
  // n bytes big-endian (n <= 8).
  uint64_t be(size_t n) {
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v = v << 8 | (pos < in.size() ? in[pos++] : 0);
    return v;
  }
  // Up to n bytes: fewer at the end.
  std::span<const uint8_t> bytes(size_t n) {
    n = n < left() ? n : left();
    auto s = in.subspan(pos, n);
    pos += n;
    return s;
  }
};

}  // namespace sluice::fuzz
