#include "bench/load/options.hpp"

namespace sluice::bench {

const char* mode_name(Mode m) {
  switch (m) {
    case Mode::Play: return "play";
    case Mode::Publish: return "publish";
    case Mode::Latency: return "latency";
    case Mode::HttpFlv: return "http-flv";
    case Mode::Hls: return "hls";
    case Mode::SrtRead: return "srt-read";
    case Mode::SrtPublish: return "srt-publish";
    case Mode::Whep: return "whep";
  }
  return "?";
}

}  // namespace sluice::bench
