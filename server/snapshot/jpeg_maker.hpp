// One keyframe to one JPEG: libavcodec's H.264 or HEVC decoder (extradata: the stream's decoder
// configuration record; the packet: the keyframe's length-prefixed NAL units, as FLV and Enhanced
// RTMP carry them), libswscale to the asked width and to full-range YUV, and libavcodec's MJPEG
// encoder (or, for a WebP, limited-range YUV and libavcodec's libwebp encoder). Blocking and CPU-bound: the snapshot
// service runs it on the libuv threadpool (server/snapshot/snapshot_service.hpp), never on a loop. Nothing here is
// shared between calls.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "media/codec/flv_video.hpp"
#include "server/snapshot/snapshot_params.hpp"

namespace sluice::server {

struct JpegJob {
  media::VideoCodec codec = media::VideoCodec::Unknown;  // Avc or Hevc
  std::span<const uint8_t> config;                       // AVC/HEVC decoder configuration record
  std::span<const uint8_t> nalus;                        // the keyframe's NAL units, length-prefixed
  uint32_t width = 0;                                    // 0: the source's (see snapshot_size)
  uint32_t quality = 80;                                 // 1..100, as libjpeg's (libwebp's) quality
  SnapshotFormat format = SnapshotFormat::Jpeg;
};

struct JpegMade {
  std::string error;          // empty when it worked
  std::vector<uint8_t> jpeg;  // or the WebP
  uint32_t width = 0;
  uint32_t height = 0;
  uint64_t decode_us = 0;  // the decoder's share
  uint64_t total_us = 0;   // decode, scale and encode
};

JpegMade make_jpeg(const JpegJob& job);
// Whether this libavcodec has the libwebp encoder (Debian's has).
bool webp_available();

}  // namespace sluice::server
