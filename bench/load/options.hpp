// BenchOptions: everything the command line decides, as one plain struct the runner reads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sluice::bench {

enum class Mode : uint8_t {
  Play,        // N players of one or several RTMP URLs
  Publish,     // M publishers of an FLV file, paced in real time, looping
  Latency,     // one publisher and K players in this process: delay through the server
  HttpFlv,     // N HTTP-FLV players of one or several http:// URLs
  Hls,         // N HLS readers (LL-HLS parts, or segments) of http://.../index.m3u8 URLs
  SrtRead,     // N SRT callers in request mode (srt://host:port?streamid=read:app/stream)
  SrtPublish,  // M SRT callers publishing an MPEG-TS file, paced in real time, looping
  Whep,        // N WHEP players (http://host:port/app/stream/whep): ICE, DTLS, SRTP headers read
};

const char* mode_name(Mode m);

struct BenchOptions {
  Mode mode = Mode::Play;
  // rtmp://host[:port]/app/stream (http://host[:port]/app/stream.flv for http-flv); clients take
  // them round-robin. "{i}" in a URL becomes the client's index, so one URL can address many streams.
  std::vector<std::string> urls;
  uint32_t clients = 1;        // players (play, latency) or publishers (publish)
  double rate = 200;           // new connections per second during ramp-up; 0 = all at once
  double duration_s = 30;      // the whole run, ramp-up included; always bounded
  uint32_t chunk_size = 4096;  // our outgoing chunk size (Set Chunk Size sent before connect)
  uint32_t buffer_ms = 3000;   // SetBufferLength sent after play (ffmpeg's default)
  double start_s = -1;         // play start: -1 live (sent as -1000, like ffmpeg), >= 0 VOD seconds
  uint32_t stall_ms = 1000;    // media time behind wall time by more than this is a stall
  // Players: let about this much media accumulate in the socket before waking up (SO_RCVLOWAT
  // tuned from each player's own bitrate), so the bench reads in large blocks. -1 = the mode's
  // default: 100 ms for play, 0 (read at once) for latency, whose figures it would skew.
  int32_t read_batch_ms = -1;
  std::string flv_file;         // publish / latency: the FLV to send
  std::string json_file;        // also write the summary as JSON here
  bool per_client = false;      // include one record per client in the JSON
  bool quiet = false;           // no progress lines
  bool http10 = false;          // http-flv: send HTTP/1.0 requests (close-delimited body, no chunks)
  uint32_t allow_failures = 0;  // exit 0 while failed clients <= this
  bool hls_segments = false;    // hls: read segments as a standard HLS player, even from an LL-HLS playlist
  bool hls_no_skip = false;     // hls: no _HLS_skip=YES (delta updates) on blocking reloads
  // hls: also publish flv_file to this rtmp:// URL from this process, start the readers once it
  // is live, and measure each part's latency against its send time. latency: an srt:// URL, the
  // publisher of ts_file whose frames the RTMP players time.
  std::string publish_url;
  std::string ts_file;            // srt-publish, latency --publish srt://: the MPEG-TS to send
  uint32_t srt_latency_ms = 120;  // SRT callers: SRTO_LATENCY (a URL's latency= overrides it)
  uint32_t srt_ports = 0;         // SRT callers share this many local UDP ports (0: one each)
  uint32_t freeze_ms = 500;       // whep: no new video frame for longer than this is a freeze
  uint32_t consent_ms = 2500;     // whep: a STUN consent check this often (the server's timeout is 30 s)
  // whep: OpenSSL's use_srtp list; the server picks the first of its own list we offer. Chromium
  // offers both, GCM first.
  std::string srtp_profiles = "SRTP_AEAD_AES_128_GCM:SRTP_AES128_CM_SHA1_80";
};

}  // namespace sluice::bench
