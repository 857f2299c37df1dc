// VodPacer: when a VOD player reads and sends what (docs/vod.md "Pacing and memory"). Sans-I/O:
// the caller passes the loop time and the facts (bytes waiting on the connection, what it sent,
// its timer woke up) and does what next() says; it owns the file, the socket and the one timer.
//
// The media clock runs from the first sample (or the seek keyframe) in real time, stops while
// paused and restarts at each seek. The player is sent samples up to the horizon, the clock plus
// its buffer length kept between 1 and 5 s (3 s by default: rtmpdump asks for a 10-hour buffer,
// which would mean "send the whole file now"), in plans of at most kReadBudget bytes, each one
// only when its first sample has passed the low-water mark, the horizon minus min(lead / 2, 1 s).
// So a play starts with the lead at once, then refills about a second of media per wake-up (a
// file with more than kReadBudget per second: one plan per wake-up). Nothing is read while the
// connection has more than kMaxPendingBytes waiting; after kMaxBurstBytes read on the loop in one
// go (cached reads) the player yields until its next timer wake-up.
#pragma once

#include <cstddef>
#include <cstdint>

#include "media/vod/media_index.hpp"

namespace sluice::media::vod {

struct PaceDecision {
  enum class Kind : uint8_t {
    Idle,      // not playing, or paused: nothing until start(), seek() or resume()
    Read,      // read `plan`'s bytes, send its samples, call sent(), then ask again
    Wait,      // ask again at wake_at_ms (the next sample is not due yet)
    Yield,     // the burst budget is spent: ask again at wake_at_ms, after end_burst()
    Blocked,   // too much waits on the connection: ask again when it has written some
    Finished,  // the end of the samples or of the requested duration
  };
  Kind kind = Kind::Idle;
  ReadPlan plan;            // Read
  uint64_t wake_at_ms = 0;  // Wait, Yield: loop time, 1 to kMaxWakeMs after now
};

class VodPacer {
 public:
  // At most this much of a file is read per plan (one keyframe may exceed it: plans always
  // include their first sample).
  static constexpr uint64_t kReadBudget = 64 * 1024;
  // Blocked above this many bytes waiting on the connection: a player that reads slowly holds the
  // server at this much memory, not the whole file.
  static constexpr size_t kMaxPendingBytes = 256 * 1024;
  // Yield after this many bytes read on the loop since the last wake-up, so that a new player's
  // first seconds of media do not delay everyone else.
  static constexpr uint64_t kMaxBurstBytes = 512 * 1024;
  static constexpr uint32_t kMinLeadMs = 1000;
  static constexpr uint32_t kMaxLeadMs = 5000;
  static constexpr uint32_t kDefaultLeadMs = 3000;
  static constexpr uint64_t kRefillStepMs = 1000;
  static constexpr uint64_t kMaxWakeMs = 1000;

  // The player's buffer length (SetBufferLength); 0 means unknown.
  void set_buffer_length(uint32_t ms) { buffer_ms_ = ms; }
  // How far ahead of the media clock samples are sent.
  uint32_t lead_ms() const;

  // Starts playing `index` (which must outlive the play: until stop() or the next start()) at
  // start_ms (> 0: the keyframe at or before it, index.seek; else the first sample) up to
  // start_ms + duration_ms (duration_ms < 0: to the end). Returns the first sample. A pause made
  // before the start holds.
  uint32_t start(const MediaIndex& index, double start_ms, double duration_ms, uint64_t now_ms);
  // Restarts at the keyframe at or before `ms` (index.seek), unpaused, the clock there now.
  // Returns that sample. Only while started.
  uint32_t seek(double ms, uint64_t now_ms);
  // No more play (a new item begins, or the last one ended): Idle, unpaused, index forgotten.
  void stop();

  // Pausing stops the media clock; resuming shifts it by the time paused.
  void pause(uint64_t now_ms);
  void resume(uint64_t now_ms);
  bool paused() const { return paused_; }

  // What to do now, given the bytes waiting to be written on the connection.
  PaceDecision next(uint64_t now_ms, size_t pending_bytes) const;
  // The caller sent a plan (from next()): go on after it. `read_on_loop` counts its bytes
  // towards the burst budget (a cached read; reads off the loop do not count).
  void sent(const ReadPlan& plan, bool read_on_loop);
  // The caller's timer woke it up: the burst budget starts over.
  void end_burst() { burst_bytes_ = 0; }

  // The media time the player should be playing now.
  uint64_t media_clock(uint64_t now_ms) const;
  uint32_t next_sample() const { return next_; }

 private:
  void restart_at(uint32_t sample, uint64_t now_ms);

  const MediaIndex* index_ = nullptr;
  uint32_t buffer_ms_ = 0;
  uint32_t next_ = 0;
  uint32_t end_ = 0;
  uint32_t end_ms_ = UINT32_MAX;
  uint32_t start_media_ms_ = 0;
  uint64_t start_wall_ms_ = 0;
  uint64_t paused_at_wall_ = 0;
  bool paused_ = false;
  uint64_t burst_bytes_ = 0;  // read on the loop since the last wake-up
};

}  // namespace sluice::media::vod
