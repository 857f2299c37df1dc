#include "server/srt/srt_handshake.hpp"

#include "server/access/policy.hpp"
#include "server/live/stream_registry.hpp"

namespace sluice::server {

SrtVerdict judge_srt_caller(const config::Config& config, std::string_view stream_id, std::span<const uint8_t> peer,
                            int64_t now_s) {
  SrtVerdict v;
  auto parsed = protocol::parse_srt_stream_id(stream_id);
  if (!parsed) {
    v.reject = kSrtRejectBadRequest;
    v.reason = "bad stream id: " + parsed.error().message();
    return v;
  }
  v.id = std::move(*parsed);
  v.app = config.find_app(v.id.app);
  if (v.app == nullptr || v.app->type != config::AppType::Live) {
    v.reject = kSrtRejectNotFound;
    v.reason = v.app == nullptr ? "no app '" + v.id.app + "'" : "app '" + v.id.app + "' is not a live app";
    v.app = nullptr;
    return v;
  }
  if (std::string_view problem = stream_name_problem(v.id.name); !problem.empty()) {
    v.reject = kSrtRejectBadRequest;
    v.reason = "invalid stream name: " + std::string(problem);
    return v;
  }
  const bool publish = v.id.mode == protocol::SrtStreamId::Mode::Publish;
  const AccessVerdict access =
      check_access(publish ? v.app->publish : v.app->play, publish ? AccessAction::Publish : AccessAction::Play,
                   v.app->name, v.id.name, v.id.query, peer, now_s);
  if (!access.allowed()) {
    v.reject = access.denial == Denial::KeyMissing ? kSrtRejectUnauthorized : kSrtRejectForbidden;
    v.reason = access.reason;
    return v;
  }
  v.latency = v.app->srt.latency;
  if (!v.app->srt.passphrase.value.empty()) v.passphrase = &v.app->srt.passphrase.value;
  return v;
}

}  // namespace sluice::server
