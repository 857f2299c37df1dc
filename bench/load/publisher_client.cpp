#include "bench/load/publisher_client.hpp"

#include <algorithm>
#include <string_view>

#include "bench/load/clock.hpp"
#include "bench/load/latency_tracker.hpp"
#include "bench/load/rtmp_status.hpp"

namespace sluice::bench {

namespace {

constexpr double kConnectTransaction = 1;
// Past this much unsent output the server is not keeping up with a real-time stream; keeping on
// would only grow memory and report nonsense delays.
constexpr size_t kMaxBacklogBytes = 64u << 20;

protocol::SessionOptions session_options(const BenchOptions& o) {
  auto s = protocol::options_for(protocol::SessionRole::Client);
  s.chunk_size = o.chunk_size;
  return s;
}

// @setDataFrame asks the server to store what follows as the stream's metadata (what ffmpeg and
// OBS send): the AMF0 string "@setDataFrame" in front of the file's onMetaData body.
std::vector<uint8_t> set_data_frame(std::span<const uint8_t> metadata) {
  constexpr std::string_view kName = "@setDataFrame";
  std::vector<uint8_t> out;
  out.reserve(3 + kName.size() + metadata.size());
  out.push_back(0x02);  // AMF0 string marker
  out.push_back(0);
  out.push_back(static_cast<uint8_t>(kName.size()));
  out.insert(out.end(), kName.begin(), kName.end());
  out.insert(out.end(), metadata.begin(), metadata.end());
  return out;
}

}  // namespace

PublisherClient::PublisherClient(uv_loop_t* loop, RtmpUrl url, const BenchOptions& options, const FlvFile& file,
                                 ClientStats identity, LatencyTracker* tracker)
    : url_(std::move(url)),
      file_(file),
      tracker_(tracker),
      conn_(loop, *this, session_options(options)),
      stats_(std::move(identity)) {
  stats_.role = ClientRole::Publisher;
  uv_timer_init(loop, &timer_);
  timer_.data = this;
}

void PublisherClient::start() {
  stats_.started_ns = now_ns();
  state_ = State::Connecting;
  if (int rc = conn_.start(reinterpret_cast<const sockaddr*>(&url_.addr), url_.tls ? url_.host : std::string());
      rc != 0)
    fail(std::string("connect: ") + uv_strerror(rc));
}

void PublisherClient::on_tcp_connected() { conn_.session().connect(url_.app, url_.tc_url); }

void PublisherClient::on_session_event(protocol::SessionEvent& event) {
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
    conn_.session().publish(stream_id_, url_.stream, "live");
    stats_.setup_ns = now_ns() - stats_.started_ns;
    state_ = State::Publishing;
    return;
  }
  if (auto* status = std::get_if<protocol::StatusEvent>(&event)) {
    if (is_error_status(*status)) {
      fail(describe_status(*status));
    } else if (!stats_.ok && status->code() == "NetStream.Publish.Start") {
      stats_.ok = true;
      start_sending();
    }
  }
  // Media or anything else sent to a publisher is ignored.
}

void PublisherClient::start_sending() {
  auto& session = conn_.session();
  if (auto meta = file_.metadata(); !meta.empty()) {
    session.send_media(stream_id_, protocol::msg_type::kDataAmf0, 0, set_data_frame(meta));
    ++stats_.messages_out;
  }
  t0_ns_ = now_ns();
  pump();
}

void PublisherClient::pump() {
  const int64_t now = now_ns();
  const auto& tags = file_.tags();
  auto& session = conn_.session();
  for (;;) {
    const FlvTag& tag = tags[next_];
    const int64_t media_ms =
        std::max<int64_t>(0, int64_t{tag.timestamp} - int64_t{file_.first_timestamp()}) + loop_offset_ms_;
    const int64_t due_ns = t0_ns_ + media_ms * kNsPerMs;
    if (due_ns > now) {
      const auto wait_ms = static_cast<uint64_t>((due_ns - now + kNsPerMs - 1) / kNsPerMs);
      uv_timer_start(&timer_, on_timer, wait_ms, 0);
      break;
    }
    // Script tags are skipped: the metadata went out once, as @setDataFrame.
    if (tag.type != flv_tag_type::kScript) {
      stats_.max_late_ns = std::max(stats_.max_late_ns, now - due_ns);
      const auto ts = static_cast<uint32_t>(media_ms);  // wraps like every RTMP timestamp
      session.send_media(stream_id_, tag.type, ts, file_.body(tag));
      ++stats_.messages_out;
      if (tracker_) tracker_->on_sent(tag.type, ts, now);
    }
    advance();
  }
  conn_.flush();
  const size_t backlog = conn_.write_backlog();
  stats_.max_backlog = std::max<uint64_t>(stats_.max_backlog, backlog);
  if (backlog > kMaxBacklogBytes) fail("server not reading: " + std::to_string(backlog) + " bytes unsent");
}

void PublisherClient::advance() {
  if (++next_ < file_.tags().size()) return;
  next_ = 0;
  ++stats_.loops;
  loop_offset_ms_ += int64_t{file_.last_timestamp()} - int64_t{file_.first_timestamp()} + file_.loop_gap_ms();
}

void PublisherClient::on_timer(uv_timer_t* timer) noexcept {
  auto* self = static_cast<PublisherClient*>(timer->data);
  if (self->state_ != State::Publishing) return;
  if (!guarded("publisher timer", [&] { self->pump(); })) self->fail("internal error while sending");
}

void PublisherClient::tick(int64_t) {}

void PublisherClient::on_connection_closed(const std::string& reason) {
  if (stopping_) return;
  uv_timer_stop(&timer_);
  state_ = State::Done;
  mark_failed(stats_, reason);
  stats_.ok = false;
}

void PublisherClient::fail(const std::string& reason) {
  mark_failed(stats_, reason);
  stats_.ok = false;
  state_ = State::Done;
  uv_timer_stop(&timer_);
  conn_.close();
}

void PublisherClient::stop() {
  stopping_ = true;
  if (state_ == State::Idle) {
    mark_failed(stats_, "not started before the end (ramp-up too slow for the duration)");
  } else if (!stats_.ok && !stats_.failed) {
    mark_failed(stats_, "no NetStream.Publish.Start before the end");
  }
  state_ = State::Done;
  uv_timer_stop(&timer_);
  uv_close(reinterpret_cast<uv_handle_t*>(&timer_), nullptr);
  conn_.close();
}

const ClientStats& PublisherClient::stats() {
  stats_.bytes_in = conn_.bytes_in();
  stats_.bytes_out = conn_.bytes_out();
  stats_.tls_handshake_ns = conn_.tls_handshake_ns();
  return stats_;
}

}  // namespace sluice::bench
