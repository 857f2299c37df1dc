// rtmp-probe: a scriptable RTMP player for tests, on protocol::Session with blocking sockets.
// It connects, plays one stream and prints one line per event with the time since play was sent,
// so tests can assert on statuses, first-frame latency, keyframes, timestamps and payload hashes.
//
// Usage: rtmp-probe URL [--duration S] [--start N] [--frames N] [--buffer MS]
//                       [--pause-at S --resume-at S] [--play2 NAME] [--no-reset] [--length] [--also NAME]
//                       [--rcvbuf BYTES] [--stall-at S --stall-for S]
// --rcvbuf shrinks the socket's receive buffer and --stall-* stops reading for a while (without
// pausing the stream): together they make the server's writes to this player partial or EAGAIN.
// Lines:  status +MS CODE          (onStatus / onPlayStatus codes)
//         uc +MS EVENT STREAM      (user control: StreamBegin, StreamEOF, StreamIsRecorded ...)
//         video|audio|data +MS ts=T size=N key=0|1 seq=0|1 md5=HEX
//         result +MS NAME ...      (_result/_error)
//         end reason=...
#include <netdb.h>
#include <openssl/evp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "protocol/amf0.hpp"
#include "protocol/session.hpp"

using namespace sluice;
using namespace sluice::protocol;
using Clock = std::chrono::steady_clock;

namespace {

struct Url {
  std::string host = "127.0.0.1";
  std::string port = "1935";
  std::string app;
  std::string stream;
  std::string tc_url;
};

bool parse_url(const std::string& url, Url& out) {
  const std::string scheme = "rtmp://";
  if (url.rfind(scheme, 0) != 0) return false;
  std::string rest = url.substr(scheme.size());
  size_t slash = rest.find('/');
  if (slash == std::string::npos) return false;
  std::string hostport = rest.substr(0, slash);
  std::string path = rest.substr(slash + 1);
  size_t colon = hostport.rfind(':');
  out.host = colon == std::string::npos ? hostport : hostport.substr(0, colon);
  if (colon != std::string::npos) out.port = hostport.substr(colon + 1);
  size_t s2 = path.find('/');
  if (s2 == std::string::npos) return false;
  out.app = path.substr(0, s2);
  out.stream = path.substr(s2 + 1);
  out.tc_url = scheme + hostport + "/" + out.app;
  return true;
}

std::string md5_hex(std::span<const uint8_t> bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &len, EVP_md5(), nullptr);
  std::string hex;
  char b[3];
  for (unsigned i = 0; i < len; ++i) {
    std::snprintf(b, sizeof b, "%02x", digest[i]);
    hex += b;
  }
  return hex;
}

const char* uc_name(UserControlEvent e) {
  switch (e) {
    case UserControlEvent::StreamBegin: return "StreamBegin";
    case UserControlEvent::StreamEof: return "StreamEOF";
    case UserControlEvent::StreamDry: return "StreamDry";
    case UserControlEvent::StreamIsRecorded: return "StreamIsRecorded";
    default: return "Other";
  }
}

bool is_keyframe(const Message& m) {
  if (m.type != msg_type::kVideo || m.payload.empty()) return false;
  uint8_t b = m.payload[0];
  if (b & 0x80) return ((b >> 4) & 0x07) == 1;  // Enhanced RTMP
  return (b >> 4) == 1;
}

bool is_sequence_header(const Message& m) {
  if (m.payload.size() < 2) return false;
  uint8_t b = m.payload[0];
  if (m.type == msg_type::kVideo) return (b & 0x80) ? (b & 0x0F) == 0 : ((b & 0x0F) == 7 && m.payload[1] == 0);
  if (m.type == msg_type::kAudio) return (b >> 4) == 10 && m.payload[1] == 0;
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: rtmp-probe URL [--duration S] [--start N] [--frames N] [--buffer MS] "
                 "[--pause-at S --resume-at S] [--play2 NAME] [--no-reset] [--length] [--also NAME] "
                 "[--rcvbuf BYTES] [--stall-at S --stall-for S]\n");
    return 2;
  }
  Url url;
  if (!parse_url(argv[1], url)) {
    std::fprintf(stderr, "rtmp-probe: bad URL %s\n", argv[1]);
    return 2;
  }
  double duration = 10, start = -1000, pause_at = -1, resume_at = -1, stall_at = -1, stall_for = 0;
  int rcvbuf = 0;
  long frames = -1;
  uint32_t buffer_ms = 3000;
  bool reset = true;
  bool ask_length = false;
  std::string also;  // a second stream name played on a second stream of the same connection
  std::vector<std::string> playlist;
  for (int i = 2; i < argc; ++i) {
    std::string k = argv[i];
    auto next = [&]() { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
    if (k == "--duration")
      duration = std::atof(next().c_str());
    else if (k == "--start")
      start = std::atof(next().c_str());
    else if (k == "--frames")
      frames = std::atol(next().c_str());
    else if (k == "--buffer")
      buffer_ms = static_cast<uint32_t>(std::atol(next().c_str()));
    else if (k == "--pause-at")
      pause_at = std::atof(next().c_str());
    else if (k == "--resume-at")
      resume_at = std::atof(next().c_str());
    else if (k == "--play2")
      playlist.push_back(next());
    else if (k == "--no-reset")
      reset = false;
    else if (k == "--length")
      ask_length = true;
    else if (k == "--also")
      also = next();
    else if (k == "--rcvbuf")
      rcvbuf = std::atoi(next().c_str());
    else if (k == "--stall-at")
      stall_at = std::atof(next().c_str());
    else if (k == "--stall-for")
      stall_for = std::atof(next().c_str());
  }

  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* ai = nullptr;
  if (getaddrinfo(url.host.c_str(), url.port.c_str(), &hints, &ai) != 0 || !ai) {
    std::printf("end reason=resolve\n");
    return 1;
  }
  int fd = ::socket(ai->ai_family, SOCK_STREAM, 0);
  // Before connect, so the window the server sees is small from the start.
  if (rcvbuf > 0) ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
  if (::connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
    std::printf("end reason=connect-refused\n");
    return 1;
  }
  freeaddrinfo(ai);

  Session session(options_for(SessionRole::Client));
  session.connect(url.app, url.tc_url);
  auto t0 = Clock::now();
  auto since = [&]() {
    return static_cast<long>(std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count());
  };
  Clock::time_point play_sent{};
  bool playing = false, paused = false, resumed = false;
  uint32_t stream_id = 0;
  long video_frames = 0;
  std::vector<SessionEvent> events;
  std::vector<uint8_t> out;
  uint8_t buf[65536];
  std::string end_reason = "duration";
  auto rel = [&]() {
    return playing ? static_cast<long>(
                         std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - play_sent).count())
                   : since();
  };

  for (;;) {
    out.clear();
    session.drain_output(out);
    for (size_t off = 0; off < out.size();) {
      ssize_t n = ::send(fd, out.data() + off, out.size() - off, MSG_NOSIGNAL);
      if (n <= 0) {
        std::printf("end reason=send-failed\n");
        return 1;
      }
      off += static_cast<size_t>(n);
    }
    double elapsed = since() / 1000.0;
    if (elapsed >= duration) break;
    if (frames >= 0 && video_frames >= frames) {
      end_reason = "frames";
      break;
    }
    if (playing && pause_at >= 0 && !paused && elapsed >= pause_at) {
      paused = true;
      session.pause(stream_id, true, 0);
      std::printf("cmd +%ld pause\n", rel());
      continue;
    }
    if (playing && paused && !resumed && resume_at >= 0 && elapsed >= resume_at) {
      resumed = true;
      session.pause(stream_id, false, 0);
      std::printf("cmd +%ld unpause\n", rel());
      continue;
    }
    if (playing && stall_at >= 0 && elapsed >= stall_at) {
      std::printf("cmd +%ld stall\n", rel());
      std::fflush(stdout);
      ::usleep(static_cast<useconds_t>(stall_for * 1e6));
      std::printf("cmd +%ld read\n", rel());
      stall_at = -1;
    }
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) {
      end_reason = "server-closed";
      break;
    }
    events.clear();
    auto r = session.feed({buf, static_cast<size_t>(n)}, events);
    for (auto& ev : events) {
      if (auto* res = std::get_if<ResultEvent>(&ev)) {
        std::string code = res->command.args.empty() ? "" : res->command.args[0].get_string("code");
        if (auto number = res->command.number_arg(0)) code = "value=" + std::to_string(*number);
        std::printf("result +%ld %s %s\n", rel(), res->command.name.c_str(), code.c_str());
        if (res->error) end_reason = "rejected";
        if (!res->error && code == "NetConnection.Connect.Success") session.create_stream();
      } else if (auto* sc = std::get_if<StreamCreatedEvent>(&ev)) {
        if (stream_id != 0) {
          // The second stream of --also: play it on its own message stream id.
          session.play(sc->stream_id, also, start, -1, true);
          session.set_buffer_length(sc->stream_id, buffer_ms);
          continue;
        }
        stream_id = sc->stream_id;
        if (!also.empty()) session.create_stream();
        if (ask_length) {
          amf::Value name = amf::Value::string(url.stream);
          session.send_command(0, "getStreamLength", 9, amf::Value::null(), std::span(&name, 1));
        }
        session.play(stream_id, url.stream, start, -1, reset);
        for (const auto& name : playlist) session.play(stream_id, name, start, -1, false);
        session.set_buffer_length(stream_id, buffer_ms);
        play_sent = Clock::now();
        playing = true;
      } else if (auto* st = std::get_if<StatusEvent>(&ev)) {
        std::printf("status +%ld %s\n", rel(), st->code().c_str());
      } else if (auto* uc = std::get_if<UserControlMessageEvent>(&ev)) {
        std::printf("uc +%ld %s %u\n", rel(), uc_name(uc->control.event), uc->control.value);
      } else if (auto* m = std::get_if<MediaEvent>(&ev)) {
        const Message& msg = m->message;
        const char* kind = msg.type == msg_type::kVideo ? "video" : msg.type == msg_type::kAudio ? "audio" : "data";
        if (msg.type == msg_type::kDataAmf0) {
          // Print the data message's name: onMetaData, |RtmpSampleAccess, onPlayStatus (with its code).
          auto values = amf::decode_amf0_all(msg.payload.span());
          std::string name = values && !values->empty() ? (*values)[0].as_string() : "?";
          std::string code;
          if (values)
            for (const auto& v : *values)
              if (v.is_object_like() && code.empty()) code = v.get_string("code");
          std::printf("data +%ld ts=%u size=%zu name=%s %s md5=%s\n", rel(), msg.timestamp, msg.payload.size(),
                      name.c_str(), code.c_str(), md5_hex(msg.payload.span()).c_str());
          continue;
        }
        if (msg.type == msg_type::kVideo && !is_sequence_header(msg)) ++video_frames;
        std::printf("%s +%ld sid=%u ts=%u size=%zu key=%d seq=%d md5=%s\n", kind, rel(), msg.stream_id, msg.timestamp,
                    msg.payload.size(), is_keyframe(msg) ? 1 : 0, is_sequence_header(msg) ? 1 : 0,
                    md5_hex(msg.payload.span()).c_str());
      }
    }
    if (!r) {
      std::printf("end reason=protocol-error %s\n", r.error().message().c_str());
      return 1;
    }
    if (end_reason == "rejected") break;
    std::fflush(stdout);
  }
  std::printf("end reason=%s\n", end_reason.c_str());
  ::close(fd);
  return 0;
}
