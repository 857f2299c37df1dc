// What the two audio bridges (aac_to_opus, opus_to_aac) share of libavcodec: one deleter for its
// objects, and decoding one packet into the frames it gives.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

struct AVAudioFifo;
struct AVCodecContext;
struct AVFrame;
struct SwrContext;

namespace sluice::server {

struct AvDeleter {
  void operator()(AVCodecContext* c) const;
  void operator()(SwrContext* s) const;
  void operator()(AVAudioFifo* f) const;
  void operator()(AVFrame* f) const;
};

// Sends `size` bytes to `decoder` as one packet and hands every frame it gives back to `take`
// (first: the packet's first frame), `frame` reused and unreferenced after each. False when the
// packet was refused or decoding failed (the caller counts it as skipped).
bool decode_packet(AVCodecContext* decoder, AVFrame* frame, const uint8_t* data, size_t size,
                   const std::function<void(AVFrame* decoded, bool first)>& take);

}  // namespace sluice::server
