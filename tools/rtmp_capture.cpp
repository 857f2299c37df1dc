// rtmp-capture: a one-connection RTMP listener built directly on protocol::Session, with blocking
// sockets and no server around it. It accepts one client, answers connect / createStream /
// publish / play the way the server does, prints every session event as one line, and can save
// the client's raw bytes (fuzz seeds, fixtures). Tests use it to prove real clients' handshakes
// and commands decode, independently of the server.
//
// Usage: rtmp-capture PORT [--save FILE] [--media N] [--timeout SECONDS]
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "protocol/session.hpp"

using namespace sluice;
using namespace sluice::protocol;

namespace {

bool send_all(int fd, const std::vector<uint8_t>& bytes) {
  size_t off = 0;
  while (off < bytes.size()) {
    ssize_t n = ::send(fd, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

const char* scheme_name(const Session& s) {
  return s.handshake_scheme() == HandshakeScheme::Digest ? "digest" : "simple";
}

// Waits for one client on 127.0.0.1:port; its socket, or -1 (the reason printed).
int accept_one(int port, int timeout_s) {
  int ls = ::socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  ::setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(ls, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(ls, 1) != 0) {
    std::perror("rtmp-capture: listen");
    return -1;
  }
  std::printf("listening %d\n", port);
  std::fflush(stdout);
  pollfd lp{ls, POLLIN, 0};
  if (::poll(&lp, 1, timeout_s * 1000) <= 0) {
    std::printf("timeout waiting for a client\n");
    return -1;
  }
  int fd = ::accept(ls, nullptr, nullptr);
  ::close(ls);
  return fd;
}

// The server's side of one client's session: every event printed, answered as the server would.
struct Capture {
  Session session{options_for(SessionRole::Server)};
  long media = 0;
  long media_limit = 20;
  bool done = false;

  void handle(SessionEvent& ev) {
    if (auto* c = std::get_if<ConnectEvent>(&ev)) {
      std::printf("connect app=%s tcUrl=%s flashVer=%s\n", c->connect.app.c_str(), c->connect.tc_url.c_str(),
                  c->connect.flash_ver.c_str());
      session.accept_connect();
    } else if (auto* s = std::get_if<StreamCreatedEvent>(&ev)) {
      std::printf("createStream id=%u\n", s->stream_id);
    } else if (auto* pub = std::get_if<PublishEvent>(&ev)) {
      std::printf("publish stream=%u name=%s type=%s\n", pub->stream_id, pub->publish.name.c_str(),
                  pub->publish.type.c_str());
      session.accept_publish(pub->stream_id, pub->publish.name);
    } else if (auto* play = std::get_if<PlayEvent>(&ev)) {
      std::printf("play stream=%u name=%s start=%g duration=%g\n", play->stream_id, play->play.name.c_str(),
                  play->play.start, play->play.duration);
      session.start_play(play->stream_id, play->play.name, play->play.reset, false);
      // Nothing to play: tell the client the stream ended so it exits on its own.
      session.send_status(play->stream_id, Status::PlayStop, "Stopped.");
      done = true;
    } else if (auto* m = std::get_if<MediaEvent>(&ev)) {
      std::printf("media type=%u ts=%u size=%zu\n", m->message.type, m->message.timestamp, m->message.payload.size());
      if (++media >= media_limit) done = true;
    } else if (auto* b = std::get_if<SetBufferLengthEvent>(&ev)) {
      std::printf("buffer stream=%u ms=%u\n", b->stream_id, b->buffer_ms);
    }
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: rtmp-capture PORT [--save FILE] [--media N] [--timeout SECONDS]\n");
    return 2;
  }
  int port = std::atoi(argv[1]);
  std::string save;
  Capture capture;
  int timeout_s = 20;
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string k = argv[i];
    if (k == "--save") save = argv[i + 1];
    if (k == "--media") capture.media_limit = std::atol(argv[i + 1]);
    if (k == "--timeout") timeout_s = std::atoi(argv[i + 1]);
  }
  const int fd = accept_one(port, timeout_s);
  if (fd < 0) return 1;

  Session& session = capture.session;
  std::vector<uint8_t> raw, out;
  std::vector<SessionEvent> events;
  uint8_t buf[65536];
  time_t deadline = std::time(nullptr) + timeout_s;
  bool handshake_reported = false;
  while (!capture.done && std::time(nullptr) < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 200) <= 0) continue;
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) {
      std::printf("peer closed\n");
      break;
    }
    raw.insert(raw.end(), buf, buf + n);
    events.clear();
    auto r = session.feed({buf, static_cast<size_t>(n)}, events);
    if (session.handshake_done() && !handshake_reported) {
      handshake_reported = true;
      std::printf("handshake %s\n", scheme_name(session));
    }
    for (auto& ev : events) capture.handle(ev);
    out.clear();
    session.drain_output(out);
    if (!out.empty() && !send_all(fd, out)) break;
    if (!r) {
      std::printf("error %s\n", r.error().message().c_str());
      break;
    }
    std::fflush(stdout);
  }
  if (!save.empty()) {
    if (FILE* f = std::fopen(save.c_str(), "wb")) {
      std::fwrite(raw.data(), 1, raw.size(), f);
      std::fclose(f);
    }
  }
  std::printf("end media=%ld bytes=%zu\n", capture.media, raw.size());
  ::usleep(200 * 1000);  // let the client read our last replies before the close
  ::close(fd);
  return 0;
}
