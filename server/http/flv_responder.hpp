// FlvResponder: GET/HEAD /{live-app}/{stream}.flv, a live stream as one endless FLV file. Owns the
// stream's HttpFlvPlayer (flv_player.hpp) for as long as the stream is sent.
//
// Framing: HTTP/1.1 readers get chunked transfer coding (one chunk per tag, framed by the player
// in the tag's own iovec), so the connection stays usable after the stream ends with the last
// chunk; HTTP/1.0 has no chunks, so its response is delimited by the connection's close.
//
// Lifecycle: the stream must be live unless the app waits for publishers (404 otherwise); the
// head goes out at once; the player then follows the stream until its publisher leaves (or the
// server stops), and the responder writes the last chunk and finishes. A reader that hangs up
// closes the connection (HttpConnection::on_peer_closed). Hot path: one fill() per batch, which
// adds the player's tags without any allocation of its own.
#pragma once

#include <memory>
#include <string_view>

#include "config/config.hpp"
#include "server/http/flv_player.hpp"
#include "server/access/access_ticket.hpp"
#include "server/http/responder.hpp"

namespace sluice::server {

class HttpConnection;

class FlvResponder final : public HttpResponder {
 public:
  explicit FlvResponder(HttpConnection& conn) : conn_(conn) {}

  const char* activity() const override { return "http-flv"; }
  // name: the stream name, decoded (the router took "/{app}/" and ".flv" off, the access gate
  // admitted it and gave the ticket).
  void start(const config::AppConfig& app, const std::string& name, AccessTicket ticket);

  bool fill(WriteBatch& batch, size_t max_bytes) override;
  void stop() override;
  void close() override {
    player_.reset();
    ticket_.end();
  }
  const HttpFlvPlayer* flv() const override { return player_.get(); }

 private:
  HttpConnection& conn_;
  bool chunked_ = false;
  std::unique_ptr<HttpFlvPlayer> player_;
  AccessTicket ticket_;
};

}  // namespace sluice::server
