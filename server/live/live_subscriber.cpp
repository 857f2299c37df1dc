#include "server/live/live_subscriber.hpp"

#include <algorithm>

#include "server/io/logging.hpp"
#include "server/io/write_batch.hpp"
#include "server/live/stream_registry.hpp"

namespace sluice::server {

namespace {
// Frames popped from the queue per fill: bounds one player's share of one batch.
constexpr size_t kMaxFramesPerFill = 256;

media::SubscriberQueue::Limits queue_limits(const config::PlayerQueueConfig& q) {
  media::SubscriberQueue::Limits l;
  l.soft_bytes = q.soft_bytes;
  l.hard_bytes = q.hard_bytes;
  l.soft_ms = static_cast<uint32_t>(q.soft_delay.count());
  l.hard_ms = static_cast<uint32_t>(q.hard_delay.count());
  return l;
}
}  // namespace

LiveSubscriber::LiveSubscriber(PlayerOutput& output, StreamRegistry& registry, std::string key, media::StreamHub& hub,
                               const config::PlayerQueueConfig& queue, const char* proto_field)
    : output_(output),
      registry_(registry),
      key_(std::move(key)),
      hub_(hub),
      queue_(queue_limits(queue)),
      proto_field_(proto_field) {
  registry_.hold(key_);  // hub_ must outlive this player, subscribed or not (a paused player is not)
}

LiveSubscriber::~LiveSubscriber() {
  unsubscribe();
  if (queue_.dropped_frames() > 0)
    SLUICE_LOG_INFO("conn={} event=player_end{} stream={} dropped_frames={}", output_.id(), proto_field_, key_,
                    queue_.dropped_frames());
  registry_.release(key_);
}

void LiveSubscriber::subscribe() {
  if (subscribed_) return;
  subscribed_ = true;
  hub_.add_subscriber(this);
}

void LiveSubscriber::unsubscribe() {
  if (!subscribed_) return;
  subscribed_ = false;
  hub_.remove_subscriber(this);
}

void LiveSubscriber::on_frame(const media::FramePtr& frame) {
  if (output_.closing_soon() || !wants(*frame)) return;
  auto result = queue_.push(frame, output_.write_queue_bytes());
  if (result == media::SubscriberQueue::PushResult::Queued) ++frames_in_;
  if (result == media::SubscriberQueue::PushResult::Dropped) registry_.count_drop(key_);
  if (result == media::SubscriberQueue::PushResult::Overflow) {
    SLUICE_LOG_WARN("conn={} peer={} event=slow_player{} stream={} queued_bytes={} dropped_frames={}", output_.id(),
                    output_.peer(), proto_field_, key_, queue_.bytes() + output_.write_queue_bytes(),
                    queue_.dropped_frames());
    // Inside the hub's fan-out: close at the end of this loop iteration.
    output_.schedule_close("player too slow (queue over the hard limit)");
    return;
  }
  if (!started() || queue_.bytes() >= media::kWriteNowBytes) {
    output_.request_flush();
  } else {
    output_.request_held_flush();
  }
}

void LiveSubscriber::queue_notice(Notice n) {
  notices_.push_back(PendingNotice{frames_in_, n});
  output_.request_flush();
}

bool LiveSubscriber::fill_frames(WriteBatch& batch, size_t max_bytes) {
  size_t max_frames = kMaxFramesPerFill;
  // Frames queued after the next notice wait for the next fill, so the notice goes in between.
  if (!notices_.empty()) max_frames = std::min<uint64_t>(max_frames, notices_.front().after - frames_out_);
  if (max_frames > 0 && !queue_.empty()) {
    // The frames only pass through on their way into the batch, so one vector per loop thread
    // serves every player of the loop; a vector per player kept ~1.3 KB of capacity each.
    thread_local std::vector<media::FramePtr> scratch;
    scratch.clear();
    queue_.pop_batch(scratch, max_frames, max_bytes);
    frames_out_ += scratch.size();
    for (const auto& f : scratch) append(*f, batch);
    scratch.clear();
  }
  size_t due = 0;
  while (due < notices_.size() && notices_[due].after <= frames_out_) append_notice(notices_[due++].notice, batch);
  if (due > 0) notices_.erase(notices_.begin(), notices_.begin() + static_cast<std::ptrdiff_t>(due));
  return !queue_.empty() || !notices_.empty();
}

}  // namespace sluice::server
