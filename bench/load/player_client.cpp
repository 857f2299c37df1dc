#include "bench/load/player_client.hpp"

#include <algorithm>

#include "bench/load/clock.hpp"
#include "bench/load/latency_tracker.hpp"
#include "bench/load/rtmp_status.hpp"

namespace sluice::bench {

namespace {

// connect is the session's first command, with transaction id 1.
constexpr double kConnectTransaction = 1;
constexpr uint8_t kAudio = protocol::msg_type::kAudio;
constexpr uint8_t kVideo = protocol::msg_type::kVideo;

protocol::SessionOptions session_options(const BenchOptions& o) {
  auto s = protocol::options_for(protocol::SessionRole::Client);
  s.chunk_size = o.chunk_size;
  return s;
}

// The play command's start argument: ffmpeg sends its live flag times 1000 (-1000 live, -2000
// any) and VOD positions in milliseconds, and servers read it that way.
double play_start_arg(double start_s) { return start_s * 1000; }

}  // namespace

PlayerClient::PlayerClient(uv_loop_t* loop, RtmpUrl url, const BenchOptions& options, ClientStats identity,
                           LatencyTracker* tracker)
    : url_(std::move(url)),
      options_(options),
      tracker_(tracker),
      conn_(loop, *this, session_options(options)),
      monitor_(options.stall_ms),
      batching_(static_cast<uint32_t>(std::max(0, options.read_batch_ms))),
      stats_(std::move(identity)) {
  stats_.role = ClientRole::Player;
}

void PlayerClient::start() {
  stats_.started_ns = now_ns();
  state_ = State::Connecting;
  if (int rc = conn_.start(reinterpret_cast<const sockaddr*>(&url_.addr), url_.tls ? url_.host : std::string());
      rc != 0)
    fail(std::string("connect: ") + uv_strerror(rc));
}

void PlayerClient::on_tcp_connected() {
  // Queued until the handshake completes; the session sends it right after C2.
  conn_.session().connect(url_.app, url_.tc_url);
}

void PlayerClient::on_session_event(protocol::SessionEvent& event) {
  if (auto* media = std::get_if<protocol::MediaEvent>(&event)) {
    on_media(media->message);
    return;
  }
  if (auto* result = std::get_if<protocol::ResultEvent>(&event)) {
    if (result->error) {
      fail(describe_result_error(*result, state_ == State::Connecting ? "connect" : "createStream"));
    } else if (state_ == State::Connecting && result->command.transaction_id == kConnectTransaction) {
      conn_.session().create_stream();
      state_ = State::CreatingStream;
    }
    return;
  }
  if (auto* created = std::get_if<protocol::StreamCreatedEvent>(&event)) {
    if (state_ != State::CreatingStream) return;
    stream_id_ = created->stream_id;
    auto& session = conn_.session();
    session.play(stream_id_, url_.stream, play_start_arg(options_.start_s), -1, true);
    session.set_buffer_length(stream_id_, options_.buffer_ms);
    const int64_t now = now_ns();
    monitor_.on_play_sent(now);
    stats_.setup_ns = now - stats_.started_ns;
    state_ = State::Playing;
    return;
  }
  if (auto* status = std::get_if<protocol::StatusEvent>(&event)) {
    if (is_error_status(*status)) {
      fail(describe_status(*status));
      return;
    }
    const std::string code = status->code();
    if (code == "NetStream.Play.Stop" || code == "NetStream.Play.Complete") stats_.ended = true;
    return;
  }
  if (auto* uc = std::get_if<protocol::UserControlMessageEvent>(&event)) {
    if (uc->control.event == protocol::UserControlEvent::StreamEof) stats_.ended = true;
  }
}

void PlayerClient::on_media(protocol::Message& m) {
  const int64_t now = now_ns();
  monitor_.on_media(m.type, m.timestamp, m.payload.span(), now, stats_);
  if (m.type == kAudio || m.type == kVideo) {
    stats_.ok = !stats_.failed;
    if (tracker_) tracker_->on_received(m.type, m.timestamp, now);
  }
}

void PlayerClient::tick(int64_t now_ns) {
  if (state_ != State::Playing) return;
  if (stats_.ok && !stats_.ended) monitor_.check(now_ns, stats_);
  // Batching starts after the first picture so that it never delays what TTFF measures.
  if (stats_.ttff_ns >= 0) {
    if (const int64_t lowat = batching_.update(now_ns, conn_.bytes_in()); lowat > 0)
      conn_.set_receive_low_water(static_cast<uint32_t>(lowat));
  }
}

void PlayerClient::on_connection_closed(const std::string& reason) {
  if (stopping_) return;
  state_ = State::Done;
  // A VOD play that ended may be closed by the server; anything else before the end is a failure.
  if (!stats_.ended) mark_failed(stats_, reason);
}

void PlayerClient::fail(const std::string& reason) {
  mark_failed(stats_, reason);
  stats_.ok = false;
  state_ = State::Done;
  conn_.close();
}

void PlayerClient::stop() {
  stopping_ = true;
  if (state_ == State::Idle) {
    mark_failed(stats_, "not started before the end (ramp-up too slow for the duration)");
  } else if (!stats_.ok && !stats_.failed && !stats_.ended) {
    mark_failed(stats_, "no media before the end");
  }
  state_ = State::Done;
  conn_.close();
}

const ClientStats& PlayerClient::stats() {
  stats_.bytes_in = conn_.bytes_in();
  stats_.bytes_out = conn_.bytes_out();
  stats_.tls_handshake_ns = conn_.tls_handshake_ns();
  return stats_;
}

}  // namespace sluice::bench
