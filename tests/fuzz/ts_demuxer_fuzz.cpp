// libFuzzer target for the MPEG-TS demuxer (media/ts/ts_demuxer.hpp) an SRT publisher feeds:
// arbitrary bytes as the byte stream, fed whole and again in pieces of 1..255 bytes (the first
// byte of the input chooses the piece size; the rest is the stream).
// Properties: no crash, sanitizer report or oversized allocation (run with -rss_limit_mb); an
// error ends the stream (the demuxer is not fed again), as the server drops the connection; every
// frame is an audio or video tag with a body the codec parsers take (media/codec/flv_audio.hpp,
// flv_video.hpp); the pieces give exactly the frames, and the same error, as the whole.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "media/codec/flv_audio.hpp"
#include "media/codec/flv_video.hpp"
#include "media/ts/ts_demuxer.hpp"
#include "tests/fuzz/fuzz_input.hpp"

using namespace sluice;
using namespace sluice::media;

namespace {

struct Run {
  std::vector<ts::TsDemuxer::Frame> frames;
  bool failed = false;
};

Run demux(std::span<const uint8_t> stream, size_t piece) {
  ts::TsDemuxer d(ts::TsDemuxer::Limits{1 << 20});
  Run run;
  for (size_t i = 0; i < stream.size() && !run.failed; i += piece) {
    const size_t n = piece < stream.size() - i ? piece : stream.size() - i;
    run.failed = !d.feed(stream.subspan(i, n), run.frames).ok();
  }
  if (!run.failed) d.flush(run.frames);
  return run;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t piece = data[0] == 0 ? 1 : data[0];
  const std::span<const uint8_t> stream(data + 1, size - 1);
  const Run whole = demux(stream, stream.size() + 1);
  for (const auto& f : whole.frames) {
    FUZZ_CHECK(f.type == 8 || f.type == 9);
    FUZZ_CHECK(!f.body.empty());
    if (f.type == 9) FUZZ_CHECK(parse_video_tag(f.body).ok());
    if (f.type == 8) FUZZ_CHECK(parse_audio_tag(f.body).ok());
  }
  const Run pieces = demux(stream, piece);
  FUZZ_CHECK(pieces.failed == whole.failed);
  FUZZ_CHECK(pieces.frames.size() == whole.frames.size());
  for (size_t i = 0; i < whole.frames.size(); ++i) {
    FUZZ_CHECK(pieces.frames[i].type == whole.frames[i].type);
    FUZZ_CHECK(pieces.frames[i].timestamp == whole.frames[i].timestamp);
    FUZZ_CHECK(pieces.frames[i].body == whole.frames[i].body);
  }
  return 0;
}
