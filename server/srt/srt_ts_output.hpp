// SrtTsOutput: the sending side that an SRT reader's connection and an srt:// push target share
// (docs/srt.md, "Readers"): the PlayerOutput its SrtReader writes through, flushed by the loop's
// FlushScheduler (at once, or held within rtmp.player_queue.write_delay), the reader's MPEG-TS given
// to libsrt in messages of srt.payload_size until libsrt's send buffer is full, then a wait for
// the socket to become writable, the reader's queue meanwhile under the slow-player rules. A join's
// backlog goes out at its reader's catch-up pace: a timer brings the next fill.
#pragma once

#include <srt/srt.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "server/io/flush_scheduler.hpp"
#include "server/io/loop_context.hpp"
#include "server/io/player_output.hpp"
#include "server/srt/srt_reader.hpp"
#include "server/srt/srt_ts_io.hpp"

namespace sluice::server {

class SrtTsOutput : public Flushable, public PlayerOutput {
 public:
  bool closing_soon() const override { return closed_ || !pending_close_reason.empty(); }
  size_t write_queue_bytes() const override { return sender_.unsent(); }
  uint64_t bytes_out() const override { return sender_.bytes(); }
  void schedule_close(std::string reason) override;
  void request_flush() override;
  void request_held_flush() override;
  // Sends what the reader has queued; closes with ended_reason() once its publication ended and
  // everything went out.
  void flush() override;

 protected:
  explicit SrtTsOutput(LoopContext& loop) : loop_(loop) {}
  ~SrtTsOutput();

  // The socket said writable: a blocked output goes on.
  void on_writable();
  // The derived class's socket, and how it watches it: `writable` adds SRT_EPOLL_OUT to IN and ERR.
  virtual SRTSOCKET output_socket() const = 0;
  virtual void watch_output(bool writable) = 0;
  virtual const char* ended_reason() const = 0;

  LoopContext& loop_;
  SrtTsSender sender_;
  std::unique_ptr<SrtReader> reader_;
  bool closed_ = false;

 private:
  bool send_pending();
  void pace(uint64_t wait_ms);
  static void on_pace_timer(uv_timer_t* t);
  bool blocked_ = false;              // a send met a full buffer: waiting for SRT_EPOLL_OUT
  bool pacing_ = false;               // the pace timer brings the next fill
  uv_timer_t* pace_timer_ = nullptr;  // made at the first wait; closed (and freed) by libuv
};

}  // namespace sluice::server
