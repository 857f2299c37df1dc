#include "server/srt/srt_socket.hpp"

#include <srt/logging_api.h>
#include <sys/syslog.h>

#include <cstdint>
#include <mutex>
#include <string_view>

#include "server/io/logging.hpp"

namespace sluice::server {

void route_srt_logs() {
  static std::once_flag once;
  std::call_once(once, [] {
    srt_setloglevel(LOG_NOTICE);
    srt_setlogflags(SRT_LOGF_DISABLE_TIME | SRT_LOGF_DISABLE_THREADNAME | SRT_LOGF_DISABLE_EOL);
    srt_setloghandler(nullptr, [](void*, int level, const char*, int, const char* area, const char* message) {
      SLUICE_LOG_DEBUG("proto=srt event=libsrt level={} area={} message=\"{}\"", level, area ? area : "",
                       printable(message ? std::string_view(message) : std::string_view()));
    });
  });
}

std::string srt_error(const char* call) { return std::string(call) + ": " + srt_getlasterror_str(); }

namespace {
template <typename T>
bool set_flag(SRTSOCKET s, SRT_SOCKOPT opt, T value) {
  return srt_setsockflag(s, opt, &value, sizeof value) == 0;
}
}  // namespace

bool set_srt_latency(SRTSOCKET s, std::chrono::milliseconds latency) {
  return set_flag<int32_t>(s, SRTO_LATENCY, static_cast<int32_t>(latency.count()));
}

bool set_srt_passphrase(SRTSOCKET s, const std::string& passphrase) {
  return srt_setsockflag(s, SRTO_PASSPHRASE, passphrase.data(), static_cast<int>(passphrase.size())) == 0;
}

Result<void> apply_srt_options(SRTSOCKET s, const config::SrtConfig& c) {
  bool ok = set_flag<int32_t>(s, SRTO_TRANSTYPE, SRTT_LIVE) && set_flag<bool>(s, SRTO_RCVSYN, false) &&
            set_flag<bool>(s, SRTO_SNDSYN, false) && set_srt_latency(s, c.latency) &&
            set_flag<int32_t>(s, SRTO_PAYLOADSIZE, static_cast<int32_t>(c.payload_size)) &&
            set_flag<int32_t>(s, SRTO_PEERIDLETIMEO, static_cast<int32_t>(c.peer_idle_timeout.count()));
  if (ok && c.max_bandwidth != 0) ok = set_flag<int64_t>(s, SRTO_MAXBW, static_cast<int64_t>(c.max_bandwidth));
  if (ok && !c.passphrase.value.empty()) {
    ok = set_srt_passphrase(s, c.passphrase.value) &&
         set_flag<int32_t>(s, SRTO_PBKEYLEN, static_cast<int32_t>(c.pbkeylen));
  }
  if (!ok) return Error(Errc::Io, srt_error("srt_setsockflag"));
  return {};
}

bool srt_readable(SRTSOCKET s) {
  int events = 0;
  int len = sizeof events;
  if (srt_getsockflag(s, SRTO_EVENT, &events, &len) != 0) return true;  // the read reports why
  return (events & (SRT_EPOLL_IN | SRT_EPOLL_ERR)) != 0;
}

PeerAddress srt_peer(SRTSOCKET s) {
  sockaddr_storage ss{};
  int len = sizeof ss;
  if (srt_getpeername(s, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return {};
  return peer_address_of(ss);
}

}  // namespace sluice::server
