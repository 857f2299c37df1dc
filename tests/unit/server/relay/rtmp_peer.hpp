// RtmpPeer: a scripted RTMP server on a test's libuv loop, the far end of the relay connections under
// test (push targets, pulls). Each accepted connection runs the server side of protocol::Session;
// the peer answers as its Script says and keeps what it was sent: a log of the commands, in order
// over all connections ("connect app", "publish name", "FCUnpublish name", "deleteStream", ...),
// and the media messages.
#pragma once

#include <uv.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "protocol/session.hpp"
#include "unit/server/rtmp_test_end.hpp"

namespace sluice::test {

class RtmpPeer {
 public:
  struct Script {
    bool accept_connect = true;
    bool accept_publish = true;
    bool accept_play = true;  // false: NetStream.Play.StreamNotFound (an error)
    bool silent = false;      // takes the TCP connection, never reads or answers (a hung host)
  };
  struct Media {
    uint8_t type = 0;
    uint32_t timestamp = 0;
    std::vector<uint8_t> payload;
  };

  RtmpPeer(uv_loop_t* loop, Script script) : loop_(loop), script_(script) {
    uv_tcp_init(loop_, &listener_);
    listener_.data = this;
    ++handles_;
    sockaddr_in addr{};
    uv_ip4_addr("127.0.0.1", 0, &addr);
    uv_tcp_bind(&listener_, reinterpret_cast<const sockaddr*>(&addr), 0);
    uv_listen(reinterpret_cast<uv_stream_t*>(&listener_), 16, &RtmpPeer::on_connection);
    sockaddr_storage bound{};
    int len = sizeof bound;
    uv_tcp_getsockname(&listener_, reinterpret_cast<sockaddr*>(&bound), &len);
    port_ = ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  }
  ~RtmpPeer() {
    drop_all();
    uv_close(reinterpret_cast<uv_handle_t*>(&listener_),
             [](uv_handle_t* h) { --static_cast<RtmpPeer*>(h->data)->handles_; });
    while (handles_ > 0) uv_run(loop_, UV_RUN_ONCE);
  }
  RtmpPeer(const RtmpPeer&) = delete;
  RtmpPeer& operator=(const RtmpPeer&) = delete;

  uint16_t port() const { return port_; }
  std::string url(const std::string& app) const { return "rtmp://127.0.0.1:" + std::to_string(port_) + "/" + app; }
  const std::vector<std::string>& log() const { return log_; }
  bool saw(const std::string& entry) const { return std::find(log_.begin(), log_.end(), entry) != log_.end(); }
  const std::vector<Media>& media() const { return media_; }
  size_t accepted() const { return accepted_; }
  size_t open_connections() const { return conns_.size(); }

  // To every connection that plays: one media message, or a status.
  void send_media(uint8_t type, uint32_t timestamp, const std::vector<uint8_t>& payload) {
    for (Conn& c : conns_) {
      if (!c.playing) continue;
      c.end->session.send_media(c.stream_id, type, timestamp, payload);
      c.end->flush();
    }
  }
  void send_status(protocol::Status code) {
    for (Conn& c : conns_) {
      if (!c.playing) continue;
      c.end->session.send_status(c.stream_id, code, "sent by the test");
      c.end->flush();
    }
  }
  // Closes every connection (the peer's end: the relay sees the connection lost).
  void drop_all() {
    for (Conn& c : conns_) c.end->close();
  }

 private:
  struct Conn {
    RtmpTestEnd* end = nullptr;
    uint32_t stream_id = 0;
    bool playing = false;
  };

  static void on_connection(uv_stream_t* server, int status) {
    auto* self = static_cast<RtmpPeer*>(server->data);
    if (status < 0) return;
    auto* end = new RtmpTestEnd(self->loop_, protocol::SessionRole::Server);
    ++self->handles_;
    end->on_closed = [self, end](const std::string&) {
      std::erase_if(self->conns_, [end](const Conn& c) { return c.end == end; });
      --self->handles_;
    };
    if (uv_accept(server, end->stream()) != 0) return end->close();
    self->conns_.push_back({end});
    ++self->accepted_;
    end->on_event = [self, end](protocol::SessionEvent& e) { self->handle(*self->find(end), e); };
    if (!self->script_.silent) end->start_reading();
  }
  Conn* find(RtmpTestEnd* end) {
    for (Conn& c : conns_) {
      if (c.end == end) return &c;
    }
    return nullptr;
  }
  void handle(Conn& c, protocol::SessionEvent& e) {
    protocol::Session& s = c.end->session;
    if (auto* connect = std::get_if<protocol::ConnectEvent>(&e)) {
      log_.push_back("connect " + connect->connect.app);
      script_.accept_connect ? s.accept_connect() : s.reject_connect("refused by the test");
    } else if (auto* publish = std::get_if<protocol::PublishEvent>(&e)) {
      log_.push_back("publish " + publish->publish.name);
      c.stream_id = publish->stream_id;
      if (script_.accept_publish) {
        s.accept_publish(publish->stream_id, publish->publish.name);
      } else {
        s.reject_publish(publish->stream_id, protocol::Status::PublishBadName, "refused by the test");
      }
    } else if (auto* play = std::get_if<protocol::PlayEvent>(&e)) {
      log_.push_back("play " + play->play.name + (play->play.query.empty() ? "" : "?" + play->play.query));
      c.stream_id = play->stream_id;
      if (script_.accept_play) {
        c.playing = true;
        s.start_play(play->stream_id, play->play.name, true, false);
      } else {
        s.send_status(play->stream_id, protocol::Status::PlayStreamNotFound, "no such stream here");
      }
    } else if (auto* m = std::get_if<protocol::MediaEvent>(&e)) {
      auto bytes = m->message.payload.span();
      media_.push_back({m->message.type, m->message.timestamp, {bytes.begin(), bytes.end()}});
    } else if (auto* u = std::get_if<protocol::UnpublishEvent>(&e)) {
      log_.push_back("FCUnpublish " + u->name);
    } else if (auto* cs = std::get_if<protocol::CloseStreamEvent>(&e)) {
      log_.push_back(cs->deleted ? "deleteStream" : "closeStream");
    } else if (auto* cmd = std::get_if<protocol::CommandEvent>(&e)) {
      log_.push_back(cmd->command.name);
    }
  }

  uv_loop_t* loop_;
  Script script_;
  uv_tcp_t listener_{};
  uint16_t port_ = 0;
  int handles_ = 0;  // the listener and the connections not closed yet
  size_t accepted_ = 0;
  std::vector<Conn> conns_;  // open ones
  std::vector<std::string> log_;
  std::vector<Media> media_;
};

}  // namespace sluice::test
