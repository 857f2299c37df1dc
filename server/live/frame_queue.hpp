// queue_live_frame: what every live subscriber on a connection (RTMP player, HTTP-FLV reader) does
// with a frame from the hub: queue it under the slow-player policy, count a drop, close the
// connection past the hard limit, and ask for a flush — at once for the player's start and for
// large bursts, otherwise held briefly so several messages share one write.
#pragma once

#include <string>
#include <string_view>

#include "media/subscriber_queue.hpp"
#include "server/io/logging.hpp"
#include "server/server.hpp"

namespace sluice::server {

// Conn is RtmpConnection or HttpConnection. proto_field is the log line's protocol field (" proto=..."
// or empty); started says whether this subscriber has already written anything.
template <typename Conn>
void queue_live_frame(Conn& conn, media::SubscriberQueue& queue, const media::FramePtr& frame, const std::string& key,
                      bool started, std::string_view proto_field) {
  auto result = queue.push(frame, conn.write_queue_bytes());
  if (result == media::SubscriberQueue::PushResult::Dropped) conn.server().registry().count_drop(key);
  if (result == media::SubscriberQueue::PushResult::Overflow) {
    SLUICE_LOG_WARN("conn={} peer={} event=slow_player{} stream={} queued_bytes={} dropped_frames={}", conn.id(),
                    conn.peer(), proto_field, key, queue.bytes() + conn.write_queue_bytes(), queue.dropped_frames());
    // Inside the hub's fan-out: close at the end of this loop iteration.
    conn.schedule_close("player too slow (queue over the hard limit)");
    return;
  }
  if (!started || queue.bytes() >= media::kWriteNowBytes) {
    conn.request_flush();
  } else {
    conn.request_held_flush();
  }
}

}  // namespace sluice::server
