// SrtReader: one SRT caller in request mode, reading a live stream as MPEG-TS (docs/srt.md,
// "Readers"). A LiveSubscriber (server/live/live_subscriber.hpp: the bounded queue and slow-player
// policy of every live player), so it starts on the GOP cache's keyframe and a slow reader loses
// inter frames to the next keyframe, then its connection. Each frame becomes one PES through this
// reader's own TsMuxer (media/ts/ts_muxer.hpp), behind a PAT and PMT at the start and before every
// video keyframe, so a reader may start decoding at any of them; its connection sends the bytes
// in SRT messages of whole 188-byte packets.
//
// MPEG-TS has no way to say that a stream ended: when the publication ends the reader's
// connection closes after what is queued (like an HTTP-FLV response). A takeover is no end: the
// new publisher's frames follow on the same timeline.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "media/catch_up_pacer.hpp"
#include "media/hls/sample_source.hpp"
#include "media/ts/ts_muxer.hpp"
#include "server/access/access_ticket.hpp"
#include "server/live/live_subscriber.hpp"

namespace sluice::server {

class SrtReader final : public LiveSubscriber {
 public:
  SrtReader(PlayerOutput& output, StreamRegistry& registry, std::string key, media::StreamHub& hub,
            const config::PlayerQueueConfig& queue);

  void on_publish_end() override;

  // Appends the TS bytes of queued frames to `out`, at most about max_bytes of frames; true when
  // frames remain queued.
  bool fill(std::vector<uint8_t>& out, size_t max_bytes, uint64_t now_ms);
  // While the join's backlog goes out: how long to wait before the next fill (0: go on).
  bool catching_up() const { return !pacer_.done(); }
  uint64_t catch_up_wait_ms(uint64_t now_ms) const { return pacer_.wait_ms(now_ms); }
  // The publication ended and everything queued went into fill(): the connection may close.
  bool ended() const { return ended_ && queue_empty(); }

  AccessTicket ticket;

 private:
  bool wants(const media::Frame& f) const override;
  bool started() const override { return started_; }
  void append(const media::Frame& f, WriteBatch& batch) override;

  media::hls::SampleSource source_;
  std::unique_ptr<media::ts::TsMuxer> muxer_;  // made for the first setup, anew when it changes
  std::vector<uint8_t>* out_ = nullptr;        // fill()'s target while it runs
  uint64_t now_ms_ = 0;                        // fill()'s time while it runs
  media::CatchUpPacer pacer_;
  bool tables_due_ = false;
  bool started_ = false;
  bool ended_ = false;
};

}  // namespace sluice::server
