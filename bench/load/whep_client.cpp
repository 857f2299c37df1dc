#include "bench/load/whep_client.hpp"

#include <openssl/rand.h>

#include <array>
#include <utility>

#include "bench/load/clock.hpp"
#include "bench/load/whep_sdp.hpp"
#include "protocol/webrtc/datagram_kind.hpp"

namespace sluice::bench {

namespace pw = protocol::webrtc;

namespace {

constexpr int64_t kStepLimitNs = 10 * kNsPerSec;    // answer, ICE, DTLS: each
constexpr int64_t kCheckPeriodNs = 500 * kNsPerMs;  // ICE checks until one succeeds
constexpr uint64_t kDeleteLimitMs = 3000;
constexpr size_t kAnswerKeep = 64 * 1024;
constexpr int kReceiveBuffer = 1 << 20;  // a keyframe to a player that reads late

// recvmmsg: libuv cuts the buffer into 64 KiB slots, at most 20 per call. Every socket reads into
// this one buffer: each datagram is handled before the next read.
constexpr size_t kSlot = 64 * 1024;
constexpr size_t kSlots = 20;
alignas(64) std::array<char, kSlot * kSlots> g_buffer;

uint64_t random_u64() {
  uint64_t v = 0;
  RAND_bytes(reinterpret_cast<uint8_t*>(&v), sizeof v);
  return v;
}

double ms_between(int64_t from, int64_t to) { return static_cast<double>(to - from) / kNsPerMs; }

// The path of a Location (a path already, or an absolute URL).
std::string location_path(const std::string& location) {
  const size_t scheme = location.find("://");
  if (scheme == std::string::npos) return location;
  const size_t slash = location.find('/', scheme + 3);
  return slash == std::string::npos ? "/" : location.substr(slash);
}

}  // namespace

WhepClient::WhepClient(uv_loop_t* loop, const HttpUrl& url, WhepContext& ctx, ClientStats identity)
    : loop_(loop),
      url_(url),
      ctx_(ctx),
      stats_(std::move(identity)),
      http_(loop, url.addr, url.host_header, *this),
      rtp_(ctx.options().freeze_ms) {}

WhepClient::~WhepClient() = default;

void WhepClient::start() {
  const int64_t now = now_ns();
  stats_.started_ns = now;
  state_ = State::Offering;
  step_deadline_ns_ = now + kStepLimitNs;
  ufrag_ = random_ice_token(8);
  pwd_ = random_ice_token(24);
  const std::string offer = make_whep_offer({ufrag_, pwd_, ctx_.identity().fingerprint(), random_u64() >> 2});
  http_.request("POST", url_.path, "Content-Type: application/sdp\r\n", offer, kAnswerKeep);
}

void WhepClient::on_response(HttpResponse& response) {
  if (deleting_) return on_deleted(std::to_string(response.status));
  if (state_ == State::Offering) on_answer(response);
}

void WhepClient::on_http_error(const std::string& reason) {
  if (deleting_) return on_deleted("error: " + reason);
  if (state_ == State::Offering) fail("offer: " + reason);
}

void WhepClient::on_answer(const HttpResponse& response) {
  http_.close();  // a page sends nothing more until the DELETE
  offer_ns_ = response.sent_ns;
  answer_ns_ = response.done_ns;
  stats_.setup_ns = offer_ns_ - stats_.started_ns;
  rtp_.on_offer_sent(offer_ns_);
  if (response.status != 201) {
    return fail("offer: HTTP " + std::to_string(response.status) + " " + response.body.substr(0, 100));
  }
  location_ = location_path(response.location);
  auto answer = parse_whep_answer(response.body);
  if (!answer) return fail(answer.error().message());
  rtp_.set_video(answer->video_pt, answer->video_ssrc);
  auto dtls = DtlsClient::create(ctx_.identity(), answer->fingerprint);
  if (!dtls) return fail(dtls.error().message());
  dtls_ = std::move(*dtls);
  stun_ = StunCheck(answer->ice_ufrag + ":" + ufrag_, answer->ice_pwd, random_u64());
  if (!open_udp(answer->candidate)) return;
  const int64_t now = now_ns();
  state_ = State::Checking;
  ice_start_ns_ = now;
  step_deadline_ns_ = now + kStepLimitNs;
  send(stun_.request());
  ++stun_sent_;
  next_stun_ns_ = now + kCheckPeriodNs;
}

bool WhepClient::open_udp(const sockaddr_storage& to) {
  const unsigned family = to.ss_family == AF_INET6 ? AF_INET6 : AF_INET;
  int rc = uv_udp_init_ex(loop_, &udp_, family | UV_UDP_RECVMMSG);
  if (rc != 0) {
    fail(std::string("udp: ") + uv_strerror(rc));
    return false;
  }
  udp_.data = this;
  udp_open_ = true;
  rc = uv_udp_connect(&udp_, reinterpret_cast<const sockaddr*>(&to));
  if (rc == 0) {
    int size = kReceiveBuffer;
    uv_recv_buffer_size(reinterpret_cast<uv_handle_t*>(&udp_), &size);
    rc = uv_udp_recv_start(&udp_, on_alloc, on_recv);
  }
  if (rc != 0) {
    fail(std::string("udp: ") + uv_strerror(rc));
    return false;
  }
  return true;
}

void WhepClient::send(std::span<const uint8_t> datagram) {
  if (!udp_open_) return;
  uv_buf_t buf = uv_buf_init(const_cast<char*>(reinterpret_cast<const char*>(datagram.data())),
                             static_cast<unsigned>(datagram.size()));
  if (uv_udp_try_send(&udp_, &buf, 1, nullptr) < 0) {
    ++ctx_.totals().send_drops;  // STUN and DTLS retry by themselves
    return;
  }
  udp_out_ += datagram.size();
}

void WhepClient::send_all(DtlsClient::Datagrams& datagrams) {
  for (const auto& d : datagrams) send(d);
  datagrams.clear();
}

void WhepClient::on_alloc(uv_handle_t*, size_t, uv_buf_t* buf) noexcept {
  *buf = uv_buf_init(g_buffer.data(), static_cast<unsigned>(g_buffer.size()));
}

void WhepClient::on_recv(uv_udp_t* handle, ssize_t nread, const uv_buf_t* buf, const sockaddr*,
                         unsigned flags) noexcept {
  auto* self = static_cast<WhepClient*>(handle->data);
  if (nread < 0) {
    guarded("whep udp", [&] { self->fail(std::string("udp: ") + uv_strerror(static_cast<int>(nread))); });
    return;
  }
  // 0: nothing more (or the end of a recvmmsg batch); a truncated datagram is nobody's media.
  if (nread == 0 || (flags & UV_UDP_PARTIAL) != 0) return;
  const std::span<const uint8_t> d(reinterpret_cast<const uint8_t*>(buf->base), static_cast<size_t>(nread));
  if (!guarded("whep datagram", [&] { self->on_datagram(d, now_ns()); })) self->fail("internal error");
}

void WhepClient::on_datagram(std::span<const uint8_t> d, int64_t now) {
  udp_in_ += d.size();
  WhepTotals& t = ctx_.totals();
  ++t.datagrams;
  switch (pw::classify_datagram(d)) {
    case pw::DatagramKind::Stun: return on_stun(d, now);
    case pw::DatagramKind::Dtls: return on_dtls(d, now);
    case pw::DatagramKind::Rtp:
      rtp_.on_rtp(d, now, stats_);
      stats_.ok = stats_.ttff_ns >= 0;
      return;
    case pw::DatagramKind::Rtcp: ++t.rtcp; return;
    case pw::DatagramKind::Other: return;
  }
}

void WhepClient::on_stun(std::span<const uint8_t> d, int64_t now) {
  const StunCheck::Answer answer = stun_.on_datagram(d);
  if (answer == StunCheck::Answer::NotOurs) return;
  WhepTotals& t = ctx_.totals();
  if (state_ != State::Checking) {
    ++(answer == StunCheck::Answer::Success ? t.consent_answered : t.consent_refused);
    return;
  }
  if (answer == StunCheck::Answer::Refused) return fail("ICE: the server refused the check");
  ice_done_ns_ = now;
  state_ = State::Handshaking;
  step_deadline_ns_ = now + kStepLimitNs;
  DtlsClient::Datagrams out;
  auto started = dtls_->start(out);
  send_all(out);
  if (!started) fail(started.error().message());
}

void WhepClient::on_dtls(std::span<const uint8_t> d, int64_t now) {
  if (state_ != State::Handshaking && state_ != State::Playing) return;
  DtlsClient::Datagrams out;
  auto done = dtls_->on_datagram(d, out);
  send_all(out);
  if (!done) return fail(done.error().message());
  if (!*done) return;
  dtls_done_ns_ = now;
  state_ = State::Playing;
  next_stun_ns_ = now + int64_t{ctx_.options().consent_ms} * kNsPerMs;
}

void WhepClient::tick(int64_t now) {
  switch (state_) {
    case State::Offering:
      if (now > step_deadline_ns_) fail("offer: no answer in 10 s");
      return;
    case State::Checking:
      if (now > step_deadline_ns_) return fail("ICE: no answer to " + std::to_string(stun_sent_) + " checks");
      if (now >= next_stun_ns_) {
        send(stun_.request());
        ++stun_sent_;
        next_stun_ns_ = now + kCheckPeriodNs;
      }
      return;
    case State::Handshaking: {
      if (now > step_deadline_ns_) return fail("DTLS: not done in 10 s");
      const auto due = dtls_->timeout_ms();
      if (!due || *due > 0) return;
      DtlsClient::Datagrams out;
      auto r = dtls_->on_timeout(out);
      send_all(out);
      if (!r) fail(r.error().message());
      return;
    }
    case State::Playing:
      rtp_.check(now, stats_);
      if (now >= next_stun_ns_) {
        send(stun_.request());  // consent (RFC 7675): the server drops a silent session
        ++ctx_.totals().consent_sent;
        next_stun_ns_ = now + int64_t{ctx_.options().consent_ms} * kNsPerMs;
      }
      return;
    case State::Idle:
    case State::Done: return;
  }
}

void WhepClient::fail(const std::string& reason) {
  mark_failed(stats_, reason);
  state_ = State::Done;
  close_udp();
  if (!deleting_) http_.close();
}

void WhepClient::close_udp() {
  if (!udp_open_) return;
  udp_open_ = false;
  uv_udp_recv_stop(&udp_);
  uv_close(reinterpret_cast<uv_handle_t*>(&udp_), nullptr);
}

void WhepClient::stop() {
  const int64_t now = now_ns();
  if (state_ == State::Playing) rtp_.check(now, stats_);
  if (stats_.started_ns == 0) {
    mark_failed(stats_, "not started before the end (ramp-up too slow)");
  } else if (!stats_.ok) {
    switch (state_) {
      case State::Offering: mark_failed(stats_, "offer: no answer before the end"); break;
      case State::Checking: mark_failed(stats_, "ICE: not done before the end"); break;
      case State::Handshaking: mark_failed(stats_, "DTLS: not done before the end"); break;
      default: mark_failed(stats_, "no video frame before the end"); break;
    }
  }
  record();
  state_ = State::Done;
  close_udp();
  if (location_.empty() || deleting_) {
    if (!deleting_) http_.close();
    return;
  }
  // The WHEP resource goes as a page's would; its answer comes while the loop runs dry.
  deleting_ = true;
  uv_timer_init(loop_, &delete_timer_);
  delete_timer_.data = this;
  uv_timer_start(&delete_timer_, on_delete_timeout, kDeleteLimitMs, 0);
  http_.request("DELETE", location_, {}, {}, 256);
}

void WhepClient::on_deleted(const std::string& outcome) {
  if (!deleting_) return;
  deleting_ = false;
  ++ctx_.totals().deletes[outcome];
  http_.close();
  uv_timer_stop(&delete_timer_);
  uv_close(reinterpret_cast<uv_handle_t*>(&delete_timer_), nullptr);
}

void WhepClient::on_delete_timeout(uv_timer_t* timer) noexcept {
  auto* self = static_cast<WhepClient*>(timer->data);
  guarded("whep delete", [&] { self->on_deleted("timeout"); });
}

void WhepClient::record() {
  if (recorded_) return;
  recorded_ = true;
  WhepTotals& t = ctx_.totals();
  if (answer_ns_) t.answer_ms.push_back(ms_between(offer_ns_, answer_ns_));
  if (ice_done_ns_) t.ice_ms.push_back(ms_between(ice_start_ns_, ice_done_ns_));
  if (dtls_done_ns_) t.dtls_ms.push_back(ms_between(ice_done_ns_, dtls_done_ns_));
  if (dtls_done_ns_ && stats_.ttff_ns >= 0)
    t.first_frame_ms.push_back(ms_between(dtls_done_ns_, offer_ns_ + stats_.ttff_ns));
  t.stun_requests += stun_sent_;
  if (dtls_) {
    t.dtls_retransmissions += dtls_->retransmissions();
    if (dtls_->connected()) ++t.dtls[dtls_->summary()];
  }
  const RtpMonitor::Figures f = rtp_.figures();
  t.video_packets += f.video_packets;
  t.video_lost += f.video_lost;
  t.audio_packets += f.audio_packets;
  t.audio_lost += f.audio_lost;
  t.frames += f.frames;
  t.frames_incomplete += f.frames_incomplete;
  if (f.frames > 1) t.max_frame_gap_ms.push_back(static_cast<double>(f.max_frame_gap_ns) / kNsPerMs);
  if (f.video_clock_ratio > 0) t.video_clock_ratio.push_back(f.video_clock_ratio);
}

const ClientStats& WhepClient::stats() {
  stats_.bytes_in = udp_in_ + http_.bytes_in();
  stats_.bytes_out = udp_out_ + http_.bytes_out();
  return stats_;
}

}  // namespace sluice::bench
