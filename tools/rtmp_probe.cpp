// rtmp-probe: a scriptable RTMP player for tests, on protocol::Session with blocking sockets.
// It connects, plays one stream and prints one line per event with the time since play was sent,
// so tests can assert on statuses, first-frame latency, keyframes, timestamps and payload hashes.
//
// Usage: rtmp-probe URL [--duration S] [--start N] [--frames N] [--buffer MS]
//                       [--pause-at S --resume-at S] [--play2 NAME] [--no-reset] [--length] [--also NAME]
//                       [--rcvbuf BYTES] [--stall-at S --stall-for S] [--epoch]
// --rcvbuf shrinks the socket's receive buffer and --stall-* stops reading for a while (without
// pausing the stream): together they make the server's writes to this player partial or EAGAIN.
// Lines:  status +MS CODE          (onStatus / onPlayStatus codes)
//         uc +MS EVENT STREAM      (user control: StreamBegin, StreamEOF, StreamIsRecorded ...)
//         video|audio|data +MS ts=T size=N key=0|1 seq=0|1 md5=HEX
//         result +MS NAME ...      (_result/_error)
//         play +0 epoch_ms=MS      (--epoch: when play was sent, on the wall clock, so that +MS
//                                   can be set beside other processes' times)
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

struct Options {
  double duration = 10, start = -1000, pause_at = -1, resume_at = -1, stall_at = -1, stall_for = 0;
  int rcvbuf = 0;
  long frames = -1;
  uint32_t buffer_ms = 3000;
  bool reset = true;
  bool ask_length = false;
  bool epoch = false;
  std::string also;  // a second stream name played on a second stream of the same connection
  std::vector<std::string> playlist;
};

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 2; i < argc; ++i) {
    std::string k = argv[i];
    auto next = [&]() { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
    if (k == "--duration")
      o.duration = std::atof(next().c_str());
    else if (k == "--start")
      o.start = std::atof(next().c_str());
    else if (k == "--frames")
      o.frames = std::atol(next().c_str());
    else if (k == "--buffer")
      o.buffer_ms = static_cast<uint32_t>(std::atol(next().c_str()));
    else if (k == "--pause-at")
      o.pause_at = std::atof(next().c_str());
    else if (k == "--resume-at")
      o.resume_at = std::atof(next().c_str());
    else if (k == "--play2")
      o.playlist.push_back(next());
    else if (k == "--no-reset")
      o.reset = false;
    else if (k == "--length")
      o.ask_length = true;
    else if (k == "--also")
      o.also = next();
    else if (k == "--rcvbuf")
      o.rcvbuf = std::atoi(next().c_str());
    else if (k == "--stall-at")
      o.stall_at = std::atof(next().c_str());
    else if (k == "--stall-for")
      o.stall_for = std::atof(next().c_str());
    else if (k == "--epoch")
      o.epoch = true;
  }
  return o;
}

// A connected socket, or -1 with the end line printed.
int connect_to(const Url& url, int rcvbuf) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* ai = nullptr;
  if (getaddrinfo(url.host.c_str(), url.port.c_str(), &hints, &ai) != 0 || !ai) {
    std::printf("end reason=resolve\n");
    return -1;
  }
  int fd = ::socket(ai->ai_family, SOCK_STREAM, 0);
  // Before connect, so the window the server sees is small from the start.
  if (rcvbuf > 0) ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
  if (::connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
    std::printf("end reason=connect-refused\n");
    return -1;
  }
  freeaddrinfo(ai);
  return fd;
}

// One line per media message; data messages with their name (onMetaData, |RtmpSampleAccess,
// onPlayStatus with its code).
void print_media(const Message& msg, long rel) {
  if (msg.type == msg_type::kDataAmf0) {
    auto values = amf::decode_amf0_all(msg.payload.span());
    std::string name = values && !values->empty() ? (*values)[0].as_string() : "?";
    std::string code;
    if (values)
      for (const auto& v : *values)
        if (v.is_object_like() && code.empty()) code = v.get_string("code");
    std::printf("data +%ld ts=%u size=%zu name=%s %s md5=%s\n", rel, msg.timestamp, msg.payload.size(), name.c_str(),
                code.c_str(), md5_hex(msg.payload.span()).c_str());
    return;
  }
  const char* kind = msg.type == msg_type::kVideo ? "video" : msg.type == msg_type::kAudio ? "audio" : "data";
  std::printf("%s +%ld sid=%u ts=%u size=%zu key=%d seq=%d md5=%s\n", kind, rel, msg.stream_id, msg.timestamp,
              msg.payload.size(), is_keyframe(msg) ? 1 : 0, is_sequence_header(msg) ? 1 : 0,
              md5_hex(msg.payload.span()).c_str());
}

class Probe {
 public:
  Probe(Url url, Options o) : url_(std::move(url)), o_(std::move(o)), session_(options_for(SessionRole::Client)) {
    session_.connect(url_.app, url_.tc_url);
  }

  // The exit status; the end line printed.
  int run(int fd) {
    for (;;) {
      if (!send_output(fd)) {
        std::printf("end reason=send-failed\n");
        return 1;
      }
      double elapsed = since() / 1000.0;
      if (elapsed >= o_.duration) break;
      if (o_.frames >= 0 && video_frames_ >= o_.frames) {
        end_reason_ = "frames";
        break;
      }
      if (timed_command(elapsed)) continue;
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      ssize_t n = ::recv(fd, buf_, sizeof buf_, 0);
      if (n <= 0) {
        end_reason_ = "server-closed";
        break;
      }
      events_.clear();
      auto r = session_.feed({buf_, static_cast<size_t>(n)}, events_);
      for (auto& ev : events_) handle(ev);
      if (!r) {
        std::printf("end reason=protocol-error %s\n", r.error().message().c_str());
        return 1;
      }
      if (end_reason_ == "rejected") break;
      std::fflush(stdout);
    }
    std::printf("end reason=%s\n", end_reason_.c_str());
    return 0;
  }

 private:
  long since() const {
    return static_cast<long>(std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0_).count());
  }
  // Milliseconds since play was sent (since the start before that).
  long rel() const {
    return playing_ ? static_cast<long>(
                          std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - play_sent_).count())
                    : since();
  }
  bool send_output(int fd) {
    out_.clear();
    session_.drain_output(out_);
    for (size_t off = 0; off < out_.size();) {
      ssize_t n = ::send(fd, out_.data() + off, out_.size() - off, MSG_NOSIGNAL);
      if (n <= 0) return false;
      off += static_cast<size_t>(n);
    }
    return true;
  }
  // --pause-at, --resume-at (true: a command to send first), --stall-at.
  bool timed_command(double elapsed) {
    if (playing_ && o_.pause_at >= 0 && !paused_ && elapsed >= o_.pause_at) {
      paused_ = true;
      session_.pause(stream_id_, true, 0);
      std::printf("cmd +%ld pause\n", rel());
      return true;
    }
    if (playing_ && paused_ && !resumed_ && o_.resume_at >= 0 && elapsed >= o_.resume_at) {
      resumed_ = true;
      session_.pause(stream_id_, false, 0);
      std::printf("cmd +%ld unpause\n", rel());
      return true;
    }
    if (playing_ && o_.stall_at >= 0 && elapsed >= o_.stall_at) {
      std::printf("cmd +%ld stall\n", rel());
      std::fflush(stdout);
      ::usleep(static_cast<useconds_t>(o_.stall_for * 1e6));
      std::printf("cmd +%ld read\n", rel());
      o_.stall_at = -1;
    }
    return false;
  }
  void handle(SessionEvent& ev) {
    if (auto* res = std::get_if<ResultEvent>(&ev)) {
      std::string code = res->command.args.empty() ? "" : res->command.args[0].get_string("code");
      if (auto number = res->command.number_arg(0)) code = "value=" + std::to_string(*number);
      std::printf("result +%ld %s %s\n", rel(), res->command.name.c_str(), code.c_str());
      if (res->error) end_reason_ = "rejected";
      if (!res->error && code == "NetConnection.Connect.Success") session_.create_stream();
    } else if (auto* sc = std::get_if<StreamCreatedEvent>(&ev)) {
      on_stream_created(sc->stream_id);
    } else if (auto* st = std::get_if<StatusEvent>(&ev)) {
      std::printf("status +%ld %s\n", rel(), st->code().c_str());
    } else if (auto* uc = std::get_if<UserControlMessageEvent>(&ev)) {
      std::printf("uc +%ld %s %u\n", rel(), uc_name(uc->control.event), uc->control.value);
    } else if (auto* m = std::get_if<MediaEvent>(&ev)) {
      const Message& msg = m->message;
      if (msg.type == msg_type::kVideo && !is_sequence_header(msg)) ++video_frames_;
      print_media(msg, rel());
    }
  }
  void on_stream_created(uint32_t id) {
    if (stream_id_ != 0) {
      // The second stream of --also: play it on its own message stream id.
      session_.play(id, o_.also, o_.start, -1, true);
      session_.set_buffer_length(id, o_.buffer_ms);
      return;
    }
    stream_id_ = id;
    if (!o_.also.empty()) session_.create_stream();
    if (o_.ask_length) {
      amf::Value name = amf::Value::string(url_.stream);
      session_.send_command(0, "getStreamLength", 9, amf::Value::null(), std::span(&name, 1));
    }
    session_.play(stream_id_, url_.stream, o_.start, -1, o_.reset);
    for (const auto& name : o_.playlist) session_.play(stream_id_, name, o_.start, -1, false);
    session_.set_buffer_length(stream_id_, o_.buffer_ms);
    play_sent_ = Clock::now();
    playing_ = true;
    if (o_.epoch) {
      const auto wall =
          std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch());
      std::printf("play +0 epoch_ms=%lld\n", static_cast<long long>(wall.count()));
    }
  }

  Url url_;
  Options o_;
  Session session_;
  Clock::time_point t0_ = Clock::now();
  Clock::time_point play_sent_{};
  bool playing_ = false, paused_ = false, resumed_ = false;
  uint32_t stream_id_ = 0;
  long video_frames_ = 0;
  std::vector<SessionEvent> events_;
  std::vector<uint8_t> out_;
  uint8_t buf_[65536];
  std::string end_reason_ = "duration";
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: rtmp-probe URL [--duration S] [--start N] [--frames N] [--buffer MS] "
                 "[--pause-at S --resume-at S] [--play2 NAME] [--no-reset] [--length] [--also NAME] "
                 "[--rcvbuf BYTES] [--stall-at S --stall-for S] [--epoch]\n");
    return 2;
  }
  Url url;
  if (!parse_url(argv[1], url)) {
    std::fprintf(stderr, "rtmp-probe: bad URL %s\n", argv[1]);
    return 2;
  }
  const Options options = parse_options(argc, argv);
  const int fd = connect_to(url, options.rcvbuf);
  if (fd < 0) return 1;
  Probe probe(url, options);
  const int status = probe.run(fd);
  ::close(fd);
  return status;
}
