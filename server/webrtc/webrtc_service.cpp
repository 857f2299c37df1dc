#include "server/webrtc/webrtc_service.hpp"

#include <openssl/rand.h>

#include <mutex>

#include "protocol/webrtc/datagram_kind.hpp"
#include "protocol/webrtc/ice_lite.hpp"
#include "protocol/webrtc/stun.hpp"
#include "server/io/logging.hpp"
#include "server/io/uv_handle.hpp"
#include "server/live/live_join.hpp"
#include "server/webrtc/whep_player.hpp"

namespace sluice::server {

namespace pw = protocol::webrtc;

std::atomic<size_t> WebrtcService::total_sessions_{0};

namespace {

constexpr uint64_t kTickMs = 100;  // DTLS retransmissions (400 ms at first) ride on it

// ICE credentials and resource ids: random, from the characters ice-char allows (RFC 8839).
std::string random_token(size_t length) {
  static constexpr char kChars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::string out(length, 'a');
  std::vector<uint8_t> bytes(length);
  RAND_bytes(bytes.data(), static_cast<int>(length));
  for (size_t i = 0; i < length; ++i) out[i] = kChars[bytes[i] % 62];
  return out;
}

uint32_t random_u32() {
  uint32_t v = 0;
  RAND_bytes(reinterpret_cast<uint8_t*>(&v), sizeof v);
  return v == 0 ? 1 : v;
}

std::optional<protocol::IpAddress> parse_ip(const std::string& text) {
  if (auto v4 = protocol::parse_ipv4(text)) return v4;
  return protocol::parse_ipv6(text);
}

// Every loop's answers carry the same fingerprint: one certificate, made by the first loop to
// start (a P-256 key takes a millisecond; once is enough).
Result<std::shared_ptr<const WebrtcCertificate>> shared_certificate() {
  static std::mutex mutex;
  static std::shared_ptr<const WebrtcCertificate> certificate;
  std::lock_guard<std::mutex> lock(mutex);
  if (!certificate) {
    auto made = WebrtcCertificate::generate();
    if (!made) return made.error();
    certificate = *made;
  }
  return certificate;
}

}  // namespace

WebrtcService::WebrtcService(PublishServices& services, uint32_t worker)
    : services_(services),
      worker_(worker),
      port_(services.loop.loop(), [this](std::span<const uint8_t> d, const UdpPeer& from) { on_datagram(d, from); }) {}

WebrtcService::~WebrtcService() = default;

Result<void> WebrtcService::start(std::vector<std::string>& bound) {
  const config::WebrtcConfig& c = services_.loop.config().webrtc;
  if (!c.enabled()) return {};
  auto certificate = shared_certificate();
  if (!certificate) return certificate.error();
  certificate_ = *certificate;
  if (auto srtp = SrtpSession::init_library(); !srtp) return srtp.error();
  const config::ListenAddress& at = c.listen.front();
  const uint16_t want = at.port == 0 ? 0 : static_cast<uint16_t>(at.port + worker_);
  auto port = port_.open(at.host, want);
  if (!port) return port.error();
  port_number_ = *port;
  for (const std::string& a : c.advertise) {
    if (auto ip = parse_ip(a)) candidates_.push_back(*ip);
  }
  if (candidates_.empty()) {
    const bool wildcard = at.host == "0.0.0.0" || at.host == "::";
    if (auto ip = parse_ip(wildcard ? std::string("127.0.0.1") : at.host)) candidates_.push_back(*ip);
  }
  uv_timer_init(services_.loop.loop(), &tick_);
  tick_.data = this;
  uv_timer_start(&tick_, &WebrtcService::on_tick, kTickMs, kTickMs);
  started_ = true;
  const std::string where = (at.is_ipv6() ? "[" + at.host + "]" : at.host) + ":" + std::to_string(port_number_);
  bound.push_back("webrtc udp " + where);
  SLUICE_LOG_INFO("event=webrtc_listening worker={} address={}", worker_, where);
  return {};
}

Result<WebrtcService::Answer> WebrtcService::open(Offer&& offer) {
  const config::WebrtcConfig& c = services_.loop.config().webrtc;
  if (!started_) return Error(Errc::Unsupported, "webrtc is not enabled (webrtc.listen)");
  if (total_sessions() >= c.max_sessions) {
    return Error(Errc::LimitExceeded, "the server holds its maximum of WebRTC sessions (webrtc.max_sessions)");
  }
  if (offer.role == pw::WebrtcRole::Whep) {
    LiveJoin join = check_live_join(services_.registry, *offer.app, offer.name);
    if (join.outcome == LiveJoin::Outcome::BadName) {
      return Error(Errc::Malformed, "invalid stream name: " + std::string(join.name_problem));
    }
    if (join.outcome == LiveJoin::Outcome::NotLive) return Error(Errc::NotFound, "stream is not live");
    // Refused now rather than played as sound and a black picture.
    if (const media::StreamHub* hub = services_.registry.find(join.key)) {
      if (auto codec = whep_unplayable_video(*hub)) {
        return Error(Errc::Unsupported,
                     "the stream's video is " + std::string(*codec) + "; WebRTC players get H.264 only");
      }
    }
  }
  auto parsed = pw::parse_sdp(offer.sdp);
  if (!parsed) return parsed.error();
  pw::AnswerConfig ac;
  ac.role = offer.role;
  ac.ice_ufrag = random_token(8);
  ac.ice_pwd = random_token(24);
  ac.fingerprint_sha256 = certificate_->fingerprint();
  ac.addresses = candidates_;
  ac.port = port_number_;
  ac.session_id = (uint64_t{random_u32()} << 31) ^ random_u32();
  ac.stream_id = offer.app->name + "-" + offer.name;
  ac.video.ssrc = random_u32();
  ac.video.track_id = "video";
  ac.audio.ssrc = random_u32();
  ac.audio.track_id = "audio";
  auto answer = pw::build_answer(*parsed, ac);
  if (!answer) return answer.error();
  WebrtcPlan plan;
  plan.role = offer.role;
  plan.key = offer.app->name + "/" + offer.name;
  plan.local_ufrag = ac.ice_ufrag;
  plan.local_pwd = ac.ice_pwd;
  for (size_t i = 0; i < answer->sections.size() && i < parsed->media.size(); ++i) {
    const pw::AnswerSection& a = answer->sections[i];
    const pw::MediaSection& m = parsed->media[i];
    if (!a.accepted) continue;
    if (plan.remote_ufrag.empty()) plan.remote_ufrag = m.ice_ufrag;
    if (plan.remote_fingerprint.empty()) plan.remote_fingerprint = m.fingerprint_sha256;
    WhepPlayer::Track& track = a.kind == "video" ? plan.video : plan.audio;
    track.payload_type = a.codec ? a.codec->codec.payload_type : 0;
    track.rtx_payload_type = a.codec ? a.codec->rtx_payload_type.value_or(0) : 0;
    track.ssrc = a.kind == "video" ? ac.video.ssrc : ac.audio.ssrc;
    track.sequence = static_cast<uint16_t>(random_u32());
  }
  plan.access = std::move(offer.access);
  plan.event = std::move(offer.event);
  const std::string id = std::to_string(worker_) + "-" + random_token(16);
  auto session = std::make_unique<WebrtcSession>(*this, id, std::move(plan), services_.loop.now_ms());
  by_ufrag_[ac.ice_ufrag] = session.get();
  sessions_.emplace(id, std::move(session));
  total_sessions_.fetch_add(1, std::memory_order_relaxed);
  return Answer{id, std::move(answer->sdp)};
}

void WebrtcService::on_datagram(std::span<const uint8_t> datagram, const UdpPeer& from) {
  const uint64_t now = services_.loop.now_ms();
  switch (pw::classify_datagram(datagram)) {
    case pw::DatagramKind::Stun: {
      auto message = pw::parse_stun(datagram);
      if (!message) {
        ++counters_.stun_bad;
        return;
      }
      auto ufrag = pw::stun_local_ufrag(*message);
      auto it = ufrag ? by_ufrag_.find(std::string(*ufrag)) : by_ufrag_.end();
      if (it == by_ufrag_.end()) {
        ++counters_.stun_unknown;
        return;
      }
      it->second->on_stun(*message, from, now);
      return;
    }
    case pw::DatagramKind::Dtls:
    case pw::DatagramKind::Rtp:
    case pw::DatagramKind::Rtcp: {
      auto it = by_peer_.find(from.key());
      if (it == by_peer_.end()) {
        ++counters_.unknown_source;
        return;
      }
      it->second->on_datagram(datagram, now);
      return;
    }
    case pw::DatagramKind::Other: ++counters_.other; return;
  }
}

void WebrtcService::peer_chosen(WebrtcSession& session, const UdpPeer& old_peer, bool had_peer) {
  if (had_peer) {
    auto it = by_peer_.find(old_peer.key());
    if (it != by_peer_.end() && it->second == &session) by_peer_.erase(it);
  }
  by_peer_[session.udp_peer().key()] = &session;
}

WebrtcService::End WebrtcService::end(const std::string& session_id, const std::string& why) {
  auto it = sessions_.find(session_id);
  if (it != sessions_.end()) {
    remove(*it->second, why);
    return End::Ended;
  }
  const size_t dash = session_id.find('-');
  if (dash == std::string::npos || dash == 0 || dash > 4) return End::Unknown;
  uint32_t worker = 0;
  for (size_t i = 0; i < dash; ++i) {
    if (session_id[i] < '0' || session_id[i] > '9') return End::Unknown;
    worker = worker * 10 + static_cast<uint32_t>(session_id[i] - '0');
  }
  if (worker == worker_ || !forward_end_) return End::Unknown;
  forward_end_(worker, session_id);
  return End::Forwarded;
}

void WebrtcService::remove(WebrtcSession& session, const std::string& why) {
  by_ufrag_.erase(session.local_ufrag());
  if (session.has_peer()) {
    auto it = by_peer_.find(session.udp_peer().key());
    if (it != by_peer_.end() && it->second == &session) by_peer_.erase(it);
  }
  auto it = sessions_.find(session.session_id());
  if (it == sessions_.end()) return;
  std::unique_ptr<WebrtcSession> owned = std::move(it->second);
  sessions_.erase(it);
  total_sessions_.fetch_sub(1, std::memory_order_relaxed);
  owned->end(why);
  closed_.push_back(std::move(owned));  // deleted at the next tick: the caller may be inside it
}

void WebrtcService::close_later(WebrtcSession& session, const std::string& why) { remove(session, why); }

void WebrtcService::reap() {
  closed_.clear();
  std::erase_if(shared_, [](const auto& kv) { return kv.second.expired(); });
}

std::shared_ptr<SharedMedia> WebrtcService::shared_media(const std::string& key) {
  std::weak_ptr<SharedMedia>& slot = shared_[key];
  std::shared_ptr<SharedMedia> shared = slot.lock();
  if (!shared) {
    shared = std::make_shared<SharedMedia>();
    slot = shared;
  }
  return shared;
}

void WebrtcService::close_all(const std::string& why) {
  while (!sessions_.empty()) remove(*sessions_.begin()->second, why);
}

void WebrtcService::on_tick(uv_timer_t* t) { static_cast<WebrtcService*>(t->data)->tick(); }

void WebrtcService::tick() {
  reap();
  const uint64_t now = services_.loop.now_ms();
  const auto timeout = static_cast<uint64_t>(services_.loop.config().webrtc.session_timeout.count());
  // A snapshot: a session may close (leave the table) from inside on_tick. Closed ones stay
  // alive in closed_ until the next tick's reap.
  std::vector<WebrtcSession*> all;
  all.reserve(sessions_.size());
  for (auto& [id, s] : sessions_) all.push_back(s.get());
  for (WebrtcSession* s : all) {
    s->on_tick(now);
    if (s->state() == WebrtcSession::State::Closed) continue;
    if (s->state() != WebrtcSession::State::Connected && now - s->created_ms() > timeout) {
      remove(*s, "ICE and DTLS did not complete");
    } else if (now - s->last_heard_ms() > timeout) {
      remove(*s, "the peer went silent");
    }
  }
}

void WebrtcService::stop() {
  close_all("server stopped");
  reap();
  if (started_) {
    uv_timer_stop(&tick_);
    close_handle(&tick_);
  }
  started_ = false;
  port_.close();  // also after a failed start: the port may be open without being bound
}

}  // namespace sluice::server
