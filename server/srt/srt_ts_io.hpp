// MPEG-TS over an SRT socket, the two halves that an accepted connection and a relay link share
// (docs/srt.md, "How it runs"): receiving every message libsrt holds through the demuxer, and
// sending a reader's bytes in messages of whole packets until libsrt's send buffer is full.
// Both are called on the loop when the SrtPoller says the socket is ready (edge-triggered: each
// goes on until libsrt would block).
#pragma once

#include <srt/srt.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "media/ts/ts_demuxer.hpp"

namespace sluice::server {

class SrtTsReceiver {
 public:
  enum class Outcome : uint8_t {
    Drained,  // libsrt holds nothing more: wait for the next readable
    Stopped,  // on_frame said stop (the consumer went)
    Closed,   // the peer closed or the connection broke (`error` says which)
    Bad,      // the bytes are no MPEG-TS the demuxer can read (`error` says why)
  };
  // Reads while libsrt has a message; each frame the demuxer completes goes to on_frame (false:
  // stop reading).
  Outcome receive(SRTSOCKET s, const std::function<bool(media::ts::TsDemuxer::Frame&)>& on_frame, std::string& error);
  uint64_t bytes() const { return bytes_; }
  const media::ts::TsDemuxer& demuxer() const { return demuxer_; }

 private:
  media::ts::TsDemuxer demuxer_;
  std::vector<media::ts::TsDemuxer::Frame> frames_;
  uint64_t bytes_ = 0;
};

class SrtTsSender {
 public:
  enum class Outcome : uint8_t { Sent, Blocked, Failed };
  // Where the caller appends TS bytes to send.
  std::vector<uint8_t>& buffer() { return pending_; }
  // Sends what the buffer holds in messages of at most `payload` bytes; Blocked when libsrt's
  // send buffer is full (the rest waits for writable), Failed with `error` when the socket failed.
  Outcome send(SRTSOCKET s, size_t payload, std::string& error);
  size_t unsent() const { return pending_.size() - sent_; }
  uint64_t bytes() const { return bytes_; }

 private:
  std::vector<uint8_t> pending_;
  size_t sent_ = 0;
  uint64_t bytes_ = 0;
};

}  // namespace sluice::server
