// FLV header and tag framing, the push-fed FlvParser, and @setDataFrame handling.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "unit/test_bytes.hpp"
#include "media/flv/flv.hpp"
#include "media/flv/flv_parser.hpp"
#include "media/frame.hpp"
#include "media/script_data.hpp"
#include "protocol/message.hpp"

using namespace sluice;
using namespace sluice::media;
using sluice::Errc;
using sluice::Slice;
using sluice::test::Bytes;
using sluice::test::cat;

namespace {

Bytes amf0_string(std::string_view s) {
  Bytes out{0x02, uint8_t(s.size() >> 8), uint8_t(s.size())};
  out.insert(out.end(), s.begin(), s.end());
  return out;
}

// "onMetaData" ECMA array {width: 1280} as a publisher encodes it.
const Bytes kMetaBody = {0x08, 0, 0, 0, 1, 0, 5, 'w', 'i', 'd', 't', 'h', 0x00, 0x40, 0x94, 0, 0, 0, 0, 0, 0, 0, 0, 9};

struct SampleTag {
  uint8_t type;
  uint32_t ts;
  Bytes body;
};

std::vector<SampleTag> sample_tags() {
  return {
      {18, 0, cat({amf0_string("onMetaData"), kMetaBody})},
      {9, 0, {0x17, 0, 0, 0, 0, 1, 0x64, 0, 0x1f}},
      {8, 0, {0xaf, 0, 0x12, 0x10}},
      {9, 40, Bytes(300, 0x27)},
      {8, 23, {}},                          // empty body: the legacy silence marker
      {9, 0x12345678, {0x27, 1, 0, 0, 0}},  // a timestamp that needs TimestampExtended
  };
}

Bytes sample_file() {
  Bytes file;
  write_flv_header(true, true, file);
  for (const auto& t : sample_tags()) append_tag(t.type, t.ts, t.body, file);
  return file;
}

void check_tags(const std::vector<FlvTag>& got, size_t count) {
  const auto want = sample_tags();
  REQUIRE(got.size() == count);
  for (size_t i = 0; i < count; ++i) {
    CAPTURE(i);
    CHECK(got[i].type == want[i].type);
    CHECK(got[i].timestamp == want[i].ts);
    CHECK(Bytes(got[i].body.span().begin(), got[i].body.span().end()) == want[i].body);
  }
}

}  // namespace

TEST_CASE("FLV file header round trip") {
  Bytes out;
  write_flv_header(true, false, out);
  CHECK(out == Bytes{'F', 'L', 'V', 1, 0x04, 0, 0, 0, 9, 0, 0, 0, 0});
  auto h = parse_flv_header(out);
  REQUIRE(h.ok());
  CHECK(h->has_audio);
  CHECK_FALSE(h->has_video);
  CHECK(h->data_offset == 9);

  out.clear();
  write_flv_header(false, true, out);
  CHECK(out[4] == 0x01);

  CHECK(parse_flv_header(Bytes{'F', 'L', 'V', 1, 5, 0, 0, 0}).error().code == Errc::Truncated);
  CHECK(parse_flv_header(Bytes{'F', 'L', 'X', 1, 5, 0, 0, 0, 9}).error().code == Errc::Malformed);
  CHECK(parse_flv_header(Bytes{'F', 'L', 'V', 1, 5, 0, 0, 0, 8}).error().code == Errc::Malformed);
}

TEST_CASE("FLV tag header round trip") {
  uint8_t h[kFlvTagHeaderSize];
  write_tag_header(9, 0x012345, 0xAB123456, h);
  CHECK(Bytes(h, h + 11) == Bytes{9, 0x01, 0x23, 0x45, 0x12, 0x34, 0x56, 0xAB, 0, 0, 0});
  auto t = parse_tag_header(std::span<const uint8_t>(h, 11));
  REQUIRE(t.ok());
  CHECK(t->type == 9);
  CHECK(t->data_size == 0x012345);
  CHECK(t->timestamp == 0xAB123456);
  CHECK_FALSE(t->filter);

  uint8_t p[4];
  write_previous_tag_size(0x012345, p);
  CHECK(Bytes(p, p + 4) == Bytes{0, 0x01, 0x23, 0x50});

  const uint8_t filtered[11] = {0x29, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0};
  auto f = parse_tag_header(filtered);
  REQUIRE(f.ok());
  CHECK(f->filter);
  CHECK(f->type == 9);
  CHECK(parse_tag_header(std::span<const uint8_t>(h, 10)).error().code == Errc::Truncated);
}

TEST_CASE("FlvParser: whole file, byte at a time, and random splits") {
  const Bytes file = sample_file();
  const size_t n = sample_tags().size();

  SUBCASE("whole") {
    FlvParser p;
    auto tags = p.feed(file);
    REQUIRE(tags.ok());
    check_tags(*tags, n);
    CHECK_FALSE(p.mid_tag());
    CHECK(p.previous_size_mismatches() == 0);
    REQUIRE(p.header().has_value());
    CHECK(p.header()->has_video);
  }
  SUBCASE("byte at a time") {
    FlvParser p;
    std::vector<FlvTag> all;
    for (uint8_t b : file) {
      auto tags = p.feed(std::span<const uint8_t>(&b, 1));
      REQUIRE(tags.ok());
      for (auto& t : *tags) all.push_back(std::move(t));
    }
    check_tags(all, n);
  }
  SUBCASE("splits") {
    for (size_t split = 1; split < file.size(); split += 7) {
      FlvParser p;
      auto a = p.feed(std::span(file).first(split));
      auto b = p.feed(std::span(file).subspan(split));
      REQUIRE(a.ok());
      REQUIRE(b.ok());
      std::vector<FlvTag> all = std::move(*a);
      for (auto& t : *b) all.push_back(std::move(t));
      check_tags(all, n);
    }
  }
}

TEST_CASE("FlvParser tolerates a truncated last tag") {
  const Bytes file = sample_file();
  const size_t n = sample_tags().size();
  // Cut inside the last tag's body: every earlier tag comes out and the parser says mid_tag().
  FlvParser p;
  auto tags = p.feed(std::span(file).first(file.size() - 4 - 2));
  REQUIRE(tags.ok());
  check_tags(*tags, n - 1);
  CHECK(p.mid_tag());

  // A file without the last PreviousTagSize still yields its last tag.
  FlvParser q;
  auto all = q.feed(std::span(file).first(file.size() - 4));
  REQUIRE(all.ok());
  check_tags(*all, n);
  CHECK_FALSE(q.mid_tag());

  // Cut inside a tag header.
  FlvParser r;
  auto some = r.feed(std::span(file).first(13 + 5));
  REQUIRE(some.ok());
  CHECK(some->empty());
  CHECK(r.mid_tag());
}

TEST_CASE("FlvParser errors and limits") {
  FlvParser bad;
  CHECK(bad.feed(Bytes{'F', 'L', 'X', 1, 5, 0, 0, 0, 9}).error().code == Errc::Malformed);
  CHECK_FALSE(bad.feed(Bytes{1, 2, 3}).ok());  // stays failed

  Bytes file = sample_file();
  FlvParser small(FlvParser::Limits{100});
  auto r = small.feed(file);
  CHECK(r.error().code == Errc::LimitExceeded);

  // DataOffset past 9 skips the extra header bytes.
  Bytes padded = {'F', 'L', 'V', 1, 5, 0, 0, 0, 12, 0xEE, 0xEE, 0xEE};
  padded.insert(padded.end(), file.begin() + 9, file.end());
  FlvParser p;
  auto tags = p.feed(padded);
  REQUIRE(tags.ok());
  check_tags(*tags, sample_tags().size());

  // Wrong PreviousTagSize values are counted, not fatal.
  file[13 + 11 + sample_tags()[0].body.size() + 3] ^= 0xFF;
  FlvParser lax;
  auto lax_tags = lax.feed(file);
  REQUIRE(lax_tags.ok());
  CHECK(lax.previous_size_mismatches() == 1);
}

TEST_CASE("@setDataFrame stripping is a re-slice") {
  const Bytes tail = cat({amf0_string("onMetaData"), kMetaBody});
  const Bytes msg = cat({amf0_string("@setDataFrame"), tail});
  Slice payload = Slice::copy_of(msg);

  CHECK(is_set_data_frame(msg));
  CHECK(is_set_data_frame_metadata(msg));
  CHECK_FALSE(is_on_metadata(msg));
  CHECK(is_on_metadata(tail));
  CHECK(*leading_amf0_string(msg) == "@setDataFrame");

  auto stripped = strip_set_data_frame(payload);
  REQUIRE(stripped.has_value());
  CHECK(Bytes(stripped->span().begin(), stripped->span().end()) == tail);
  CHECK(stripped->data() == payload.data() + 16);  // same bytes, no copy
  CHECK(payload.use_count() == 2);

  CHECK_FALSE(strip_set_data_frame(Slice::copy_of(tail)).has_value());
  CHECK_FALSE(strip_set_data_frame(Slice::copy_of(amf0_string("@setDataFrame"))).has_value());
  CHECK_FALSE(leading_amf0_string(Bytes{0x02, 0x00}).ok());
  CHECK_FALSE(leading_amf0_string(Bytes{0x02, 0x00, 0x05, 'a'}).ok());
  CHECK_FALSE(is_on_metadata(Bytes{}));
  CHECK_FALSE(is_set_data_frame(Bytes{0x00, 0x40}));

  // Other handlers after @setDataFrame are unwrapped too, but are not metadata.
  const Bytes cue = cat({amf0_string("@setDataFrame"), amf0_string("onCuePoint"), Bytes{0x05}});
  CHECK(is_set_data_frame(cue));
  CHECK_FALSE(is_set_data_frame_metadata(cue));
}

TEST_CASE("make_frame strips @setDataFrame and flags metadata") {
  namespace mt = sluice::protocol::msg_type;
  const Bytes tail = cat({amf0_string("onMetaData"), kMetaBody});
  Slice payload = Slice::copy_of(cat({amf0_string("@setDataFrame"), tail}));
  auto f = make_frame(mt::kDataAmf0, 0, payload.share());
  CHECK(f->kind == FrameKind::Data);
  CHECK(f->metadata);
  CHECK(Bytes(f->payload.span().begin(), f->payload.span().end()) == tail);
  CHECK(f->payload.data() == payload.data() + 16);

  auto plain = make_frame(mt::kDataAmf0, 0, Slice::copy_of(tail));
  CHECK(plain->metadata);
  CHECK(plain->payload.size() == tail.size());

  auto cue = make_frame(mt::kDataAmf0, 0, Slice::copy_of(amf0_string("onCuePoint")));
  CHECK_FALSE(cue->metadata);

  auto amf3 = make_frame(mt::kDataAmf3, 0, Slice::copy_of(cat({Bytes{0}, tail})));
  CHECK(amf3->metadata);
  CHECK(amf3->payload.size() == tail.size() + 1);
}
