#include "server/webrtc/webrtc_session.hpp"

#include <openssl/rand.h>

#include <chrono>

#include "protocol/webrtc/datagram_kind.hpp"
#include "protocol/webrtc/ice_lite.hpp"
#include "protocol/webrtc/rtcp.hpp"
#include "server/io/logging.hpp"
#include "server/live/live_join.hpp"
#include "server/live/stream_registry.hpp"
#include "server/ingest/live_publisher.hpp"
#include "server/webrtc/webrtc_service.hpp"

namespace sluice::server {

namespace pw = protocol::webrtc;

namespace {
// A flush sends at most this much of the player's queue, then yields to the loop.
constexpr size_t kFillBytes = 256 * 1024;
// Sender reports (WHEP) and receiver reports with a REMB (WHIP): once a second, as browsers do.
constexpr uint64_t kReportMs = 1000;
// A WHIP publisher that sent no keyframe this long is asked for one: browsers send one only when
// asked, and a player's join, an HLS segment and a recording's start all wait for one.
constexpr uint64_t kPublisherKeyframeMs = 2000;
// The shortest time between two PLIs to a publisher: an encoder asked more often spends its
// bitrate on keyframes.
constexpr uint64_t kPliIntervalMs = 500;

const char* role_name(pw::WebrtcRole r) { return r == pw::WebrtcRole::Whip ? "whip" : "whep"; }
}  // namespace

WebrtcSession::WebrtcSession(WebrtcService& service, std::string id, WebrtcPlan plan, uint64_t now_ms)
    : service_(service),
      id_(std::move(id)),
      plan_(std::move(plan)),
      number_(LoopContext::next_connection_id()),
      created_ms_(now_ms),
      last_heard_ms_(now_ms) {
  SLUICE_LOG_INFO("conn={} webrtc={} event=webrtc_offer role={} stream={}", number_, id_, role_name(plan_.role),
                  plan_.key);
}

WebrtcSession::~WebrtcSession() { service_.services().loop.flush().cancel(this); }

void WebrtcSession::on_stun(const pw::StunMessage& message, const UdpPeer& from, uint64_t now_ms) {
  if (state_ == State::Closed) return;
  pw::BindingOutcome outcome = pw::answer_binding_request(
      message, pw::IceCredentials{plan_.local_ufrag, plan_.local_pwd, plan_.remote_ufrag}, from.endpoint);
  if (outcome.action == pw::BindingOutcome::Action::Ignore) return;
  service_.port().send(outcome.response, from);
  if (!outcome.authenticated) {
    SLUICE_LOG_DEBUG("conn={} webrtc={} event=stun_refused peer={} reason=\"{}\"", number_, id_,
                     from.endpoint.to_string(), outcome.reason);
    return;
  }
  last_heard_ms_ = now_ms;
  // The first checked address becomes the peer; a nominated one later takes over (the browser
  // chose it), so DTLS and media follow the pair ICE settled on.
  const bool moves = has_peer_ && outcome.nominated && !(peer_.endpoint == from.endpoint);
  if (has_peer_ && !moves) return;
  const UdpPeer old = peer_;
  const bool had = has_peer_;
  peer_ = from;
  peer_text_ = from.endpoint.to_string();
  has_peer_ = true;
  service_.peer_chosen(*this, old, had);
  SLUICE_LOG_INFO("conn={} webrtc={} event=ice_connected peer={} nominated={}", number_, id_, peer_text_,
                  outcome.nominated ? "yes" : "no");
  if (state_ != State::WaitingIce) return;
  state_ = State::Handshaking;
  auto dtls =
      DtlsTransport::create(service_.certificate_ptr(), DtlsConfig{DtlsRole::Passive, plan_.remote_fingerprint});
  if (!dtls) return close("DTLS: " + dtls.error().message());
  dtls_ = std::move(*dtls);
}

void WebrtcSession::on_datagram(std::span<const uint8_t> datagram, uint64_t now_ms) {
  if (state_ == State::Closed) return;
  last_heard_ms_ = now_ms;
  bytes_in_ += datagram.size();
  switch (pw::classify_datagram(datagram)) {
    case pw::DatagramKind::Dtls: return on_dtls(datagram);
    case pw::DatagramKind::Rtcp: return on_rtcp(datagram, now_ms);
    case pw::DatagramKind::Rtp: return on_rtp(datagram, now_ms);
    default: return;
  }
}

void WebrtcSession::on_dtls(std::span<const uint8_t> datagram) {
  if (!dtls_) return;
  DtlsTransport::Datagrams out;
  auto event = dtls_->on_datagram(datagram, out);
  send_all(out);
  if (!event) return close("DTLS: " + event.error().message());
  if (*event == DtlsEvent::Closed) return close("the peer closed DTLS (close_notify)");
  if (*event == DtlsEvent::Connected) connected();
}

void WebrtcSession::connected() {
  auto srtp = SrtpSession::create(dtls_->srtp_keys());
  if (!srtp) return close("SRTP: " + srtp.error().message());
  srtp_ = std::move(*srtp);
  state_ = State::Connected;
  SLUICE_LOG_INFO("conn={} webrtc={} event=dtls_connected peer={} dtls={} retransmissions={}", number_, id_, peer_text_,
                  dtls_->summary(), dtls_->retransmissions());
  PublishServices& services = service_.services();
  const size_t slash = plan_.key.find('/');
  const config::AppConfig* app = services.loop.config().find_app(plan_.key.substr(0, slash));
  if (app == nullptr) return close("the app went away");
  if (plan_.role == pw::WebrtcRole::Whep) return play(*app);
  std::weak_ptr<bool> alive = alive_;
  claim_publish(
      services, *app, *this, plan_.access.name, [this, alive] { return !alive.expired() && state_ != State::Closed; },
      [this, app = services.loop.keep(*app)](PublishClaim claim) { publish(*app, claim); });
}

void WebrtcSession::play(const config::AppConfig& app) {
  PublishServices& services = service_.services();
  media::StreamHub* hub = live_join_hub(services.registry, app, plan_.key);
  if (hub == nullptr) return close("rtmp.limits.max_streams reached");
  player_ = std::make_unique<WhepPlayer>(
      *this, services.registry, plan_.key, *hub, services.loop.config().rtmp.player_queue, plan_.video, plan_.audio,
      [this](std::vector<uint8_t>& packet) { send_rtp(packet); }, [this] { return service_.services().loop.now_ms(); },
      service_.shared_media(plan_.key));
  player_->ticket = AccessTicket(services.gate, AccessAction::Play, hook_base_event(plan_.access.name),
                                 std::move(plan_.access.seat), *this, services.loop);
  SLUICE_LOG_INFO("conn={} webrtc={} event=play app={} stream={} proto=webrtc", number_, id_, app.name,
                  plan_.access.name);
  request_flush();
}

void WebrtcSession::publish(const config::AppConfig& app, const PublishClaim& claim) {
  const std::string& name = plan_.access.name;
  if (!claim.granted()) {
    SLUICE_LOG_WARN("conn={} webrtc={} event=publish_rejected app={} stream=\"{}\" reason=\"{}\"", number_, id_,
                    app.name, printable(name), publish_refusal_text(app, name, claim));
    return close(publish_refusal_text(app, name, claim));
  }
  PublishServices& services = service_.services();
  publisher_ = start_publisher(*this, app, 0, name, claim,
                               AccessTicket(services.gate, AccessAction::Publish, hook_base_event(name),
                                            std::move(plan_.access.seat), *this, services.loop),
                               plan_.access.push);
  receiver_ = std::make_unique<WhipReceiver>(
      WhipReceiver::PayloadTypes{plan_.video.payload_type, plan_.video.rtx_payload_type, plan_.audio.payload_type},
      [this](uint8_t type, uint32_t timestamp, Slice body) {
        if (publisher_) publisher_->on_frame(type, timestamp, std::move(body));
      });
  SLUICE_LOG_INFO("conn={} webrtc={} event=publish app={} stream={} proto=webrtc{}", number_, id_, app.name, name,
                  claim.handover.takeovers != 0 ? " takeovers=" + std::to_string(claim.handover.takeovers) : "");
}

void WebrtcSession::on_rtp(std::span<const uint8_t> datagram, uint64_t now_ms) {
  if (!srtp_ || !receiver_) return;
  std::vector<uint8_t> copy(datagram.begin(), datagram.end());
  std::span<uint8_t> plain(copy);
  if (!srtp_->unprotect_rtp(plain)) {
    ++srtp_errors_;
    return;
  }
  receiver_->on_rtp(plain, now_ms);
  if (receiver_->keyframe_wanted()) {
    ask_keyframe(now_ms, "loss");
  } else if (pli_due_) {
    ask_keyframe(now_ms, "held");
  }
  send_publisher_feedback(now_ms);
}

// WHIP: NACKs as soon as they are due; each second a receiver report (the publisher's
// congestion control reads the loss in it, and the round trip from LSR/DLSR) and a REMB that
// says how much it may send (webrtc.publish_bitrate).
void WebrtcSession::send_publisher_feedback(uint64_t now_ms) {
  if (!receiver_ || !srtp_) return;
  feedback_.clear();
  nack_list_.clear();
  receiver_->nacks_due(now_ms, nack_list_);
  const auto video = receiver_->video_ssrc();
  if (video && !nack_list_.empty()) {
    pw::write_nack(plan_.video.ssrc, *video, nack_list_, feedback_);
    nacks_sent_ += nack_list_.size();
  }
  if (now_ms - last_rr_ms_ >= kReportMs) {
    last_rr_ms_ = now_ms;
    receiver_->write_receiver_report(plan_.video.ssrc, now_ms, feedback_);
    const std::vector<uint32_t> ssrcs = receiver_->media_ssrcs();
    if (!ssrcs.empty()) {
      pw::write_remb(plan_.video.ssrc, service_.services().loop.config().webrtc.publish_bitrate, ssrcs, feedback_);
    }
  }
  if (feedback_.empty() || !srtp_->protect_rtcp(feedback_)) return;
  send(feedback_);
}

// A PLI: the publisher's encoder sends a keyframe, so players that lost a frame recover at once
// rather than at the next GOP. At most two a second: a request inside that interval is held, not
// dropped, unless no keyframe came since the last PLI (whose keyframe, on its way, answers it
// too); the held one goes when the interval ends (checked at each of the publisher's packets).
void WebrtcSession::ask_keyframe(uint64_t now_ms, const char* why) {
  auto ssrc = receiver_ ? receiver_->video_ssrc() : std::nullopt;
  if (!ssrc || !srtp_) return;
  if (last_pli_ms_ != 0 && now_ms - last_pli_ms_ < kPliIntervalMs) {
    const auto keyframe = receiver_->last_keyframe_ms();
    if (!pli_due_ && keyframe && *keyframe >= last_pli_ms_) {
      pli_due_ = true;
      SLUICE_LOG_DEBUG("conn={} webrtc={} event=pli_held why={} since_last_ms={}", number_, id_, why,
                       now_ms - last_pli_ms_);
    }
    return;
  }
  SLUICE_LOG_DEBUG("conn={} webrtc={} event=pli_sent why={} since_last_ms={}", number_, id_, why,
                   last_pli_ms_ == 0 ? 0 : now_ms - last_pli_ms_);
  pli_due_ = false;
  last_pli_ms_ = now_ms;
  std::vector<uint8_t> pli;
  pw::write_pli(plan_.video.ssrc, *ssrc, pli);
  if (!srtp_->protect_rtcp(pli)) return;
  send(pli);
}

void WebrtcSession::on_rtcp(std::span<const uint8_t> datagram, uint64_t now_ms) {
  if (!srtp_) return;
  std::vector<uint8_t> copy(datagram.begin(), datagram.end());
  std::span<uint8_t> plain(copy);
  if (!srtp_->unprotect_rtcp(plain)) {
    ++srtp_errors_;
    return;
  }
  // Every RTCP packet keeps the session alive (last_heard_ms_). A NACK is answered from the
  // player's history. A PLI or FIR goes to the stream's publisher: a WHIP publisher's encoder is
  // asked for a keyframe (at most two a second), an RTMP or SRT publisher cannot be (its GOP brings
  // the next; a player starts on one anyway).
  auto compound = pw::parse_rtcp(plain);
  if (!compound) return;
  if (receiver_) {
    for (const auto& sr : compound->sender_reports) receiver_->on_sender_report(sr.ssrc, sr.ntp_time, now_ms);
  }
  if (!player_) return;
  for (const auto& n : compound->nacks) {
    nacks_ += n.sequences.size();
    player_->resend(n.media_ssrc, n.sequences);
  }
  // At most five a second go on: a player that sends a PLI with every packet costs no more than
  // that (the publisher is asked at most twice a second anyway).
  if (!compound->plis.empty() || !compound->firs.empty()) {
    ++keyframe_requests_;
    const bool forward = last_keyframe_request_ms_ == 0 || now_ms - last_keyframe_request_ms_ >= 200;
    SLUICE_LOG_DEBUG("conn={} webrtc={} event=keyframe_request forwarded={}", number_, id_, forward ? "yes" : "no");
    if (forward) {
      last_keyframe_request_ms_ = now_ms;
      service_.services().registry.request_keyframe(plan_.key);
    }
  }
}

void WebrtcSession::request_keyframe() { ask_keyframe(service_.services().loop.now_ms(), "player"); }

void WebrtcSession::send_sender_reports(uint64_t now_ms) {
  if (!player_ || !srtp_ || now_ms - last_sr_ms_ < kReportMs) return;
  last_sr_ms_ = now_ms;
  const auto unix_us = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count());
  std::vector<uint8_t> rtcp;
  player_->sender_reports(unix_us, now_ms, rtcp);
  if (rtcp.empty() || !srtp_->protect_rtcp(rtcp)) return;
  send(rtcp);
}

void WebrtcSession::send_rtp(std::vector<uint8_t>& packet) {
  if (!srtp_ || !has_peer_) return;
  if (!srtp_->protect_rtp(packet)) {
    ++srtp_errors_;
    return;
  }
  send(packet);
}

void WebrtcSession::send(std::span<const uint8_t> datagram) {
  if (!has_peer_) return;
  if (service_.port().send(datagram, peer_)) bytes_out_ += datagram.size();
}

void WebrtcSession::send_all(DtlsTransport::Datagrams& datagrams) {
  for (const auto& d : datagrams) send(d);
}

void WebrtcSession::on_tick(uint64_t now_ms) {
  send_sender_reports(now_ms);
  if (receiver_) {
    receiver_->poll(now_ms);
    const auto last_keyframe = receiver_->last_keyframe_ms();
    if (receiver_->keyframe_wanted()) {
      ask_keyframe(now_ms, "loss");
    } else if (last_keyframe && now_ms - *last_keyframe >= kPublisherKeyframeMs) {
      ask_keyframe(now_ms, "gop");
    } else if (pli_due_) {
      ask_keyframe(now_ms, "held");
    }
    send_publisher_feedback(now_ms);
  }
  if (!dtls_ || state_ != State::Handshaking) return;
  auto due = dtls_->timeout_ms();
  if (!due || *due > 0) return;
  DtlsTransport::Datagrams out;
  auto r = dtls_->on_timeout(out);
  send_all(out);
  if (!r) close("DTLS: " + r.error().message());
}

void WebrtcSession::request_flush() {
  if (!closing_soon()) service_.services().loop.flush().flush_soon(this);
}

void WebrtcSession::request_held_flush() {
  if (!closing_soon()) service_.services().loop.flush().flush_held(this);
}

void WebrtcSession::schedule_close(std::string reason) {
  if (closing_soon()) return;
  pending_close_reason = std::move(reason);
  service_.services().loop.flush().flush_soon(this);
}

void WebrtcSession::flush() {
  if (state_ == State::Closed || !player_) return;
  if (player_->fill(kFillBytes)) request_flush();
}

void WebrtcSession::close(const std::string& reason) {
  if (state_ == State::Closed) return;
  service_.close_later(*this, reason);  // calls end()
}

void WebrtcSession::end(const std::string& reason) {
  if (state_ == State::Closed) return;
  state_ = State::Closed;
  service_.services().loop.flush().cancel(this);
  if (dtls_ && dtls_->state() == DtlsState::Connected) {
    DtlsTransport::Datagrams out;
    dtls_->close(out);
    send_all(out);
  }
  const uint64_t retransmitted = player_ ? player_->retransmitted() : 0;
  std::string figures;
  if (receiver_) {
    figures = " nacks_sent=" + std::to_string(nacks_sent_) + " rtx=" + std::to_string(receiver_->rtx_packets()) +
              " lost=" + std::to_string(receiver_->lost_packets()) +
              " given_up=" + std::to_string(receiver_->nack_stats().given_up);
  }
  if (player_) {
    player_->ticket.set_end_reason(reason);
    if (const auto start = player_->start_ms()) {
      figures += " start_ms=" + std::to_string(*start) + " start_gap_ms=" + std::to_string(player_->start_gap_ms());
    }
  }
  player_.reset();
  receiver_.reset();
  if (publisher_) {
    publisher_->ticket.set_end_reason(reason);
    publisher_.reset();
  }
  alive_.reset();
  SLUICE_LOG_INFO(
      "conn={} webrtc={} event=webrtc_close stream={} reason=\"{}\" bytes_in={} bytes_out={} "
      "srtp_errors={} nacks={} retransmitted={} keyframe_requests={}{}",
      number_, id_, plan_.key, reason, bytes_in_, bytes_out_, srtp_errors_, nacks_, retransmitted, keyframe_requests_,
      figures);
}

PublishServices& WebrtcSession::publish_services() { return service_.services(); }

HookEvent WebrtcSession::hook_base_event(const std::string& stream) const {
  HookEvent e = plan_.event;
  e.client_id = number_;
  e.stream = stream;
  e.protocol = "webrtc";
  return e;
}

void WebrtcSession::end_replaced_publisher(uint32_t, const std::string& why, bool) {
  // A takeover: this session's publication is someone else's now.
  if (publisher_) publisher_->ticket.set_end_reason(why);
  publisher_.reset();
  close(why);
}

}  // namespace sluice::server
