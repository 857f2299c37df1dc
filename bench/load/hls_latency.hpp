// HlsLatency: the age of HLS media when a reader has it, collected over all readers of a run.
//
//  - publish_ms: the part (or segment) fully received, minus the moment the publisher of this
//    process sent its first sample (LatencyTracker, matched by media time: tfdt or PES DTS in ms
//    = the RTMP timestamp). The age of the oldest frame of the part when it can be played; a
//    player that plays each part as it comes runs this far behind the publisher.
//  - pdt_ms: the same on the wall clock against the playlist's EXT-X-PROGRAM-DATE-TIME plus the
//    durations of the segment's earlier parts. It needs no publisher in this process, but it is
//    only as good as the server's PDT (Sluice anchors it when the muxer starts; an on-demand muxer
//    started from the GOP cache dates that first GOP "now", so its PDT is late by up to a GOP).
//
// Only media that was not yet listed in the reader's first playlist counts: the parts a reader
// fetches to catch up at the start are old by design.
#pragma once

#include <cstdint>
#include <vector>

namespace sluice::bench {

struct HlsLatency {
  std::vector<float> publish_ms;
  std::vector<float> pdt_ms;
  uint64_t unmatched = 0;  // live media whose first sample the publisher never sent (or no publisher)
};

}  // namespace sluice::bench
