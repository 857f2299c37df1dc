// Subscriber: what the live hub delivers to. Implemented by the server's RTMP player and
// HTTP-FLV reader, and by fakes in tests; the hub never owns one.
#pragma once

#include "media/frame.hpp"

namespace sluice::media {

class Subscriber {
 public:
  virtual ~Subscriber() = default;
  // Every frame, in order; on joining, the replay of metadata, sequence headers and the GOP cache
  // comes through here too. May call StreamHub::remove_subscriber (for itself or another).
  virtual void on_frame(const FramePtr& f) = 0;
  virtual void on_publish_start() {}  // a publisher (re)started
  virtual void on_publish_end() {}    // the publisher left; players keep waiting
};

}  // namespace sluice::media
