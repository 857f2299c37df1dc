// RtmpTestClient: an RTMP client on a test's libuv loop (the client side of protocol::Session over an
// RtmpTestEnd), for unit tests of the server's RTMP wing: connects to 127.0.0.1:port, then the test
// asks it to create a stream, publish or play, send media; it keeps the statuses and media it gets.
#pragma once

#include <uv.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "protocol/session.hpp"
#include "unit/server/rtmp_test_end.hpp"

namespace sluice::test {

class RtmpTestClient {
 public:
  struct Media {
    uint8_t type = 0;
    uint32_t timestamp = 0;
    std::vector<uint8_t> payload;
  };

  // speak = false: the TCP connection only, no handshake (a client that never starts).
  RtmpTestClient(uv_loop_t* loop, uint16_t port, std::string app, bool speak = true)
      : end_(new RtmpTestEnd(loop, protocol::SessionRole::Client)), app_(std::move(app)), speak_(speak) {
    tc_url_ = "rtmp://127.0.0.1:" + std::to_string(port) + "/" + app_;
    end_->on_event = [this](protocol::SessionEvent& e) { handle(e); };
    end_->on_closed = [this](const std::string& why) {
      end_ = nullptr;
      closed_why = why;
    };
    sockaddr_in addr{};
    uv_ip4_addr("127.0.0.1", port, &addr);
    connect_ = new uv_connect_t;  // outlives this object if the test ends first
    connect_->data = this;
    uv_tcp_connect(connect_, &end_->tcp, reinterpret_cast<const sockaddr*>(&addr), &RtmpTestClient::on_connected);
  }
  ~RtmpTestClient() {
    if (connect_) connect_->data = nullptr;
    if (!end_) return;
    end_->on_event = nullptr;
    end_->on_closed = nullptr;
    end_->close();  // freed by the loop's next turn
  }
  RtmpTestClient(const RtmpTestClient&) = delete;
  RtmpTestClient& operator=(const RtmpTestClient&) = delete;

  bool tcp_open = false;
  bool connected = false;             // the server accepted our connect
  std::string connect_error;          // or refused it, with this description
  uint32_t stream_id = 0;             // createStream's answer
  std::vector<std::string> statuses;  // onStatus codes, in order
  std::vector<Media> media;           // audio and video (data messages are in `data`)
  std::vector<Media> data;
  std::string closed_why;  // set once the connection ended ("eof": the server closed it)

  bool closed() const { return !closed_why.empty(); }
  bool got(const std::string& status) const {
    return std::find(statuses.begin(), statuses.end(), status) != statuses.end();
  }
  void create_stream() {
    run([](protocol::Session& s) { s.create_stream(); });
  }
  void publish(const std::string& name) {
    run([&](protocol::Session& s) { s.publish(stream_id, name, "live"); });
  }
  void play(const std::string& name) {
    run([&](protocol::Session& s) {
      s.set_buffer_length(stream_id, 1000);
      s.play(stream_id, name, -1000);
    });
  }
  void send_media(uint8_t type, uint32_t timestamp, const std::vector<uint8_t>& payload) {
    run([&](protocol::Session& s) { s.send_media(stream_id, type, timestamp, payload); });
  }
  void delete_stream() {
    run([&](protocol::Session& s) { s.delete_stream(stream_id); });
  }

 private:
  template <class F>
  void run(F&& f) {
    if (!end_ || end_->closing()) return;
    f(end_->session);
    end_->flush();
  }
  static void on_connected(uv_connect_t* req, int status) {
    std::unique_ptr<uv_connect_t> owned(req);
    auto* self = static_cast<RtmpTestClient*>(req->data);
    if (!self) return;
    self->connect_ = nullptr;
    if (status < 0 || !self->end_) {
      if (self->end_) self->end_->close("connect failed");
      return;
    }
    self->tcp_open = true;
    self->end_->start_reading();  // a mute client still sees the server close
    if (!self->speak_) return;
    self->run([self](protocol::Session& s) { s.connect(self->app_, self->tc_url_); });
  }
  void handle(protocol::SessionEvent& e) {
    if (auto* r = std::get_if<protocol::ResultEvent>(&e)) {
      if (r->command.transaction_id != 1 || connected) return;
      if (r->error) {
        connect_error = r->command.args.empty() ? "?" : r->command.args[0].get_string("description");
      } else {
        connected = true;
      }
    } else if (auto* c = std::get_if<protocol::StreamCreatedEvent>(&e)) {
      stream_id = c->stream_id;
    } else if (auto* s = std::get_if<protocol::StatusEvent>(&e)) {
      if (s->name == "onStatus") statuses.push_back(s->code());
    } else if (auto* m = std::get_if<protocol::MediaEvent>(&e)) {
      auto bytes = m->message.payload.span();
      Media got{m->message.type, m->message.timestamp, {bytes.begin(), bytes.end()}};
      (got.type == 8 || got.type == 9 ? media : data).push_back(std::move(got));
    }
  }

  RtmpTestEnd* end_;
  uv_connect_t* connect_ = nullptr;
  std::string app_;
  std::string tc_url_;
  bool speak_;
};

}  // namespace sluice::test
