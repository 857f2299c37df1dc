// Mp4SampleTable: the stbl tables of one track stay compact (run-length stts/ctts/stsc, one
// stsz size when all are equal) and count what the layout needs; its rules are checked through
// whole layouts in mp4_layout_test.cpp.
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "media/mp4/mp4_sample_table_writer.hpp"

using namespace sluice::media::mp4;
using Bytes = std::vector<uint8_t>;

TEST_CASE("sample tables stay compact: run-length times, one size when all are equal, stsc runs") {
  SUBCASE("constant rate, size and offset, adjacent samples") {
    Mp4SampleTable t;
    for (uint32_t i = 0; i < 100'000; ++i) t.add(uint64_t{i} * 500, 500, i * 40, 80, i % 50 == 0);
    t.close();
    CHECK(t.count() == 100'000);
    CHECK(t.duration() == 100'000 * 40);
    CHECK(t.memory_bytes() < 20'000);  // the 2000 sync samples, a run or two of each table
    Bytes out;
    BoxWriter b(out);
    t.write(b, false);
    CHECK(out.size() < 8'000 + 200);
  }
  SUBCASE("B-frame offsets, varying sizes, a chunk per sample") {
    Mp4SampleTable t;
    uint64_t at = 0;
    for (uint32_t i = 0; i < 100'000; ++i, at += 1000) t.add(at, 300 + i % 7, i * 40, int32_t(i % 3) * 40, i % 50 == 0);
    t.close();
    MESSAGE("worst-case table memory: " << t.memory_bytes() / 100'000.0 << " bytes per sample");
    CHECK(t.memory_bytes() < 100'000 * 40);
    Bytes out;
    BoxWriter b(out);
    const ChunkOffsetTable offsets = t.write(b, false);
    CHECK(offsets.count == 100'000);
    CHECK(out.size() < 100'000 * 17 + 10'000);  // stsz 4 + ctts 8 + stco 4 per sample
  }
}
