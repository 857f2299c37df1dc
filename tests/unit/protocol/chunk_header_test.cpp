// Chunk header round-trip tables. Every expected byte string is written by hand from the spec
// (docs/protocol.md, "Chunk headers" and "Extended timestamp"), not produced by our encoder.
#include "protocol/chunk_header.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace sluice;
using namespace sluice::protocol;

namespace {

struct HeaderCase {
  const char* name;
  std::vector<uint8_t> bytes;
  ChunkHeader header;
  bool type3_extended = false;
};

ChunkHeader make(uint8_t fmt, uint32_t csid, uint32_t ts, uint32_t length = 0, uint8_t type = 0, uint32_t msid = 0,
                 bool extended = false) {
  ChunkHeader h;
  h.fmt = fmt;
  h.csid = csid;
  h.timestamp = ts;
  h.length = length;
  h.type = type;
  h.stream_id = msid;
  h.extended = extended;
  return h;
}

const std::vector<HeaderCase>& cases() {
  static const std::vector<HeaderCase> kCases = {
      {"fmt0 csid 2 set chunk size",
       {0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x01, 0x00, 0x00, 0x00, 0x00},
       make(0, 2, 0, 4, 1, 0)},
      {"fmt0 csid 3 command msid 1",
       {0x03, 0x12, 0x34, 0x56, 0x00, 0x01, 0x02, 0x14, 0x01, 0x00, 0x00, 0x00},
       make(0, 3, 0x123456, 0x102, 20, 1)},
      {"fmt0 msid little-endian",
       {0x05, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x08, 0x04, 0x03, 0x02, 0x01},
       make(0, 5, 1, 0, 8, 0x01020304)},
      {"fmt1 csid 63", {0x7F, 0x00, 0x00, 0x28, 0x00, 0x01, 0x2C, 0x09}, make(1, 63, 40, 300, 9)},
      {"fmt2 csid 64 (2-byte form)", {0x80, 0x00, 0x00, 0x00, 0x21}, make(2, 64, 33)},
      {"fmt3 csid 319 (2-byte form, largest)", {0xC0, 0xFF}, make(3, 319, 0)},
      {"fmt0 csid 320 (3-byte form, smallest)",
       {0x01, 0x00, 0x01, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x00},
       make(0, 320, 1, 0, 8, 0)},
      {"fmt1 csid 65599 (3-byte form, largest)",
       {0x41, 0xFF, 0xFF, 0x00, 0x00, 0x21, 0x00, 0x00, 0x10, 0x09},
       make(1, 65599, 33, 16, 9)},
      {"fmt3 csid 65599", {0xC1, 0xFF, 0xFF}, make(3, 65599, 0)},
      {"fmt2 csid 1000 (3-byte form, low byte first)", {0x81, 0xA8, 0x03, 0x00, 0x00, 0x17}, make(2, 1000, 23)},
      {"fmt0 timestamp 0xFFFFFE fits the field",
       {0x04, 0xFF, 0xFF, 0xFE, 0x00, 0x00, 0x05, 0x09, 0x01, 0x00, 0x00, 0x00},
       make(0, 4, 0xFFFFFE, 5, 9, 1)},
      {"fmt0 timestamp 0xFFFFFF takes the extended field",
       {0x04, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x05, 0x09, 0x01, 0x00, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0xFF},
       make(0, 4, 0xFFFFFF, 5, 9, 1, true)},
      {"fmt0 extended timestamp",
       {0x04, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x05, 0x09, 0x01, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00},
       make(0, 4, 0x01000000, 5, 9, 1, true)},
      {"fmt1 extended delta",
       {0x46, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x10, 0x08, 0x12, 0x34, 0x56, 0x78},
       make(1, 6, 0x12345678, 16, 8, 0, true)},
      {"fmt2 extended delta", {0x87, 0xFF, 0xFF, 0xFF, 0x7F, 0xFF, 0xFF, 0xFF}, make(2, 7, 0x7FFFFFFF, 0, 0, 0, true)},
      {"fmt3 continuation with extended timestamp",
       {0xC4, 0x01, 0x00, 0x00, 0x00},
       make(3, 4, 0x01000000, 0, 0, 0, true),
       true},
      {"fmt3 csid 64 with extended timestamp",
       {0xC0, 0x00, 0xDE, 0xAD, 0xBE, 0xEF},
       make(3, 64, 0xDEADBEEF, 0, 0, 0, true),
       true},
      {"largest header: fmt0 csid 65599 extended",
       {0x01, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x12, 0x78, 0x56, 0x34, 0x12, 0xFF, 0xFF, 0xFF, 0xFF},
       make(0, 65599, 0xFFFFFFFF, 0xFFFFFF, 0x12, 0x12345678, true)},
  };
  return kCases;
}

}  // namespace

TEST_CASE("chunk header round-trip table: encode") {
  for (const auto& c : cases()) {
    CAPTURE(std::string(c.name));
    uint8_t buf[kMaxChunkHeaderSize];
    const size_t n = encode_chunk_header(c.header, buf);
    CHECK(std::vector<uint8_t>(buf, buf + n) == c.bytes);
    CHECK(chunk_header_size(c.header) == c.bytes.size());
    std::vector<uint8_t> appended = {0xAA};
    append_chunk_header(c.header, appended);
    CHECK(appended.size() == c.bytes.size() + 1);
    CHECK(std::vector<uint8_t>(appended.begin() + 1, appended.end()) == c.bytes);
  }
}

TEST_CASE("chunk header round-trip table: decode") {
  for (const auto& c : cases()) {
    CAPTURE(std::string(c.name));
    ChunkHeader h;
    CHECK(decode_chunk_header(c.bytes, c.type3_extended, h) == c.bytes.size());
    CHECK(h == c.header);
    // Every strict prefix is reported as incomplete, never misread.
    for (size_t len = 0; len < c.bytes.size(); ++len) {
      CAPTURE(len);
      CHECK(decode_chunk_header(std::span(c.bytes).first(len), c.type3_extended, h) == 0);
    }
    // Trailing bytes are not consumed.
    std::vector<uint8_t> longer = c.bytes;
    longer.push_back(0x55);
    CHECK(decode_chunk_header(longer, c.type3_extended, h) == c.bytes.size());
  }
}

TEST_CASE("the largest header is kMaxChunkHeaderSize") {
  const ChunkHeader h = make(0, 65599, 0xFFFFFFFF, 0xFFFFFF, 9, 1);
  CHECK(chunk_header_size(h) == kMaxChunkHeaderSize);
}

TEST_CASE("basic header boundaries") {
  struct Case {
    uint32_t csid;
    std::vector<uint8_t> bytes;  // fmt 1
  };
  const std::vector<Case> table = {
      {2, {0x42}},
      {3, {0x43}},
      {63, {0x7F}},
      {64, {0x40, 0x00}},
      {65, {0x40, 0x01}},
      {319, {0x40, 0xFF}},
      {320, {0x41, 0x00, 0x01}},
      {321, {0x41, 0x01, 0x01}},
      {65599, {0x41, 0xFF, 0xFF}},
  };
  for (const auto& c : table) {
    CAPTURE(c.csid);
    uint8_t buf[3];
    const size_t n = encode_basic_header(1, c.csid, buf);
    CHECK(n == basic_header_size(c.csid));
    CHECK(std::vector<uint8_t>(buf, buf + n) == c.bytes);
    CHECK(basic_header_size_from_byte0(c.bytes[0]) == c.bytes.size());
    uint8_t fmt = 9;
    uint32_t csid = 0;
    CHECK(decode_basic_header(c.bytes, fmt, csid) == c.bytes.size());
    CHECK(fmt == 1);
    CHECK(csid == c.csid);
  }
}

TEST_CASE("every csid round-trips through the basic header") {
  for (uint32_t csid = kMinCsid; csid <= kMaxCsid; ++csid) {
    for (uint8_t fmt = 0; fmt < 4; ++fmt) {
      uint8_t buf[3];
      const size_t n = encode_basic_header(fmt, csid, buf);
      uint8_t got_fmt = 0;
      uint32_t got_csid = 0;
      REQUIRE(decode_basic_header({buf, n}, got_fmt, got_csid) == n);
      REQUIRE(got_fmt == fmt);
      REQUIRE(got_csid == csid);
    }
  }
}

TEST_CASE("message header sizes") {
  CHECK(message_header_size(0) == 11);
  CHECK(message_header_size(1) == 7);
  CHECK(message_header_size(2) == 3);
  CHECK(message_header_size(3) == 0);
}
