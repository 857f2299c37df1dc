// media/rtp/rtp_history: the shared history numbers payloads once and finds them for a NACK;
// a player's SequenceRewriter keeps its numbers gapless when it skips packets and maps its
// NACKed numbers back to the source's.
#include <doctest/doctest.h>

#include <vector>

#include "media/rtp/rtp_history.hpp"

using namespace sluice;
using namespace sluice::media::rtp;

TEST_CASE("the history keeps the last packets by number, across the wrap") {
  RtpHistory h(4, 65534);
  Slice frame = Slice::copy_of(std::vector<uint8_t>{1, 2, 3, 4, 5, 6});
  for (int i = 0; i < 6; ++i) h.add(static_cast<uint32_t>(i * 3000), i == 5, frame.share(static_cast<size_t>(i), 1));
  CHECK(h.next_sequence() == 4);
  CHECK(h.find(65534) == nullptr);  // pushed out
  CHECK(h.find(65535) == nullptr);
  const HistoryPacket* p = h.find(3);
  REQUIRE(p != nullptr);
  CHECK(p->marker);
  CHECK(p->timestamp == 15000);
  CHECK(p->payload[0] == 6);
  REQUIRE(h.find(0) != nullptr);
  CHECK(h.find(4) == nullptr);    // not yet numbered
  CHECK(frame.use_count() == 5);  // the four kept share the frame's bytes
}

TEST_CASE("a player's numbers stay gapless across skips and map back for its NACKs") {
  SequenceRewriter r(65530);
  std::vector<uint16_t> sent;
  // Source 100..104, then a skipped frame (105..109), then 110..114.
  for (uint16_t s = 100; s < 105; ++s) sent.push_back(r.rewrite(s));
  for (uint16_t s = 110; s < 115; ++s) sent.push_back(r.rewrite(s));
  CHECK(sent == std::vector<uint16_t>{65530, 65531, 65532, 65533, 65534, 65535, 0, 1, 2, 3});
  CHECK(r.skipped() == 5);
  CHECK(r.source_of(65532) == 102);
  CHECK(r.source_of(65535) == 110);
  CHECK(r.source_of(3) == 114);
  CHECK_FALSE(r.source_of(4).has_value());      // not sent yet
  CHECK_FALSE(r.source_of(65529).has_value());  // before the first
}

TEST_CASE("offsets older than the kept ones are forgotten") {
  SequenceRewriter r(0);
  uint16_t source = 0;
  for (size_t i = 0; i < SequenceRewriter::kEpochs + 2; ++i) {
    r.rewrite(source);
    source = static_cast<uint16_t>(source + 2);  // every packet skips one
  }
  CHECK_FALSE(r.source_of(0).has_value());
  CHECK_FALSE(r.source_of(1).has_value());
  CHECK(r.source_of(2) == 4);
  CHECK(r.source_of(17) == 34);
}
