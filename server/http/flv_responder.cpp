#include "server/http/flv_responder.hpp"

#include <string>

#include "server/http/connection.hpp"
#include "server/http/service.hpp"
#include "server/http/util.hpp"
#include "server/io/guard_counters.hpp"
#include "server/io/logging.hpp"
#include "server/io/write_batch.hpp"
#include "server/live/live_join.hpp"
#include "server/live/stream_registry.hpp"

namespace sluice::server {

namespace {
// The chunked coding's end: a zero-size chunk and no trailer.
constexpr uint8_t kLastChunk[] = {'0', '\r', '\n', '\r', '\n'};
}  // namespace

void FlvResponder::start(const config::AppConfig& app, const std::string& name, AccessTicket ticket) {
  ticket_ = std::move(ticket);
  StreamRegistry& registry = conn_.service().registry();
  LiveJoin join = check_live_join(registry, app, name);
  if (join.outcome == LiveJoin::Outcome::BadName) {
    return conn_.send_error(400, "invalid stream name: " + std::string(join.name_problem), false, kHttpCors);
  }
  if (join.outcome == LiveJoin::Outcome::NotLive) {
    return conn_.send_error(404, "stream is not live", false, kHttpCors);
  }
  // Made before the head goes out, so a server at rtmp.limits.max_streams can still say so.
  media::StreamHub* hub = live_join_hub(registry, app, join.key);
  if (!hub) {
    return conn_.send_error(503, "the server holds its maximum of streams (rtmp.limits.max_streams)", false, kHttpCors);
  }
  const std::string& key = join.key;
  // A pulled stream is on its way: the log says live=yes for it, as it always has.
  const bool live = join.live();
  chunked_ = conn_.request().is_http11();
  std::string headers = "Content-Type: video/x-flv\r\nCache-Control: no-cache, no-store\r\n";
  headers += kHttpCors;
  conn_.write_head(200, headers, chunked_ ? HttpConnection::Body::Chunked : HttpConnection::Body::UntilClose);
  if (conn_.head_only()) {
    ticket_ = {};  // a HEAD is no session: no seat, no play_done
    registry.remove_if_unused(key);
    return conn_.finish_response();
  }
  SLUICE_LOG_INFO("conn={} proto=http peer={} event=play app={} stream={} live={} transfer={}", conn_.id(),
                  conn_.peer(), app.name, name, live ? "yes" : "waiting", chunked_ ? "chunked" : "close");
  player_ = std::make_unique<HttpFlvPlayer>(conn_, registry, key, *hub, chunked_,
                                            conn_.loop_context().config().rtmp.player_queue);
}

bool FlvResponder::fill(WriteBatch& batch, size_t max_bytes) {
  if (!player_) return false;
  size_t before = batch.bytes();
  HttpFlvPlayer::Fill r = player_->fill(batch, max_bytes);
  conn_.add_body_bytes(batch.bytes() - before);
  if (r != HttpFlvPlayer::Fill::Ended) return r == HttpFlvPlayer::Fill::More;
  // The publisher left and the queue is drained: the response ends here.
  if (chunked_) batch.add_bytes(kLastChunk);
  player_.reset();
  ticket_.set_end_reason("unpublished");
  ticket_.end();
  conn_.finish_response();
  return false;
}

void FlvResponder::stop() {
  if (player_) player_->end();
}

}  // namespace sluice::server
