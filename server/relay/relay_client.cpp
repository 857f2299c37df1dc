#include "server/relay/relay_client.hpp"

#include "protocol/status.hpp"
#include "server/io/logging.hpp"
#include "server/io/write_batch.hpp"
#include "server/relay/relay_sink.hpp"

namespace sluice::server {

namespace {
protocol::SessionOptions client_options(const config::Config& config) {
  protocol::SessionOptions o = protocol::options_for(protocol::SessionRole::Client);
  o.handshake.client_digest = false;  // the plain C1 librtmp and OBS send: every server takes it
  // An upstream that has not answered our connect is held to what a client is before its connect.
  o.pre_connect_max_message_size = config.rtmp.limits.pre_connect_message_size;
  return o;
}
}  // namespace

RelayClient::RelayClient(LoopContext& loop, uint64_t id, Settings settings, Owner* owner)
    : SessionSocket(loop, id, client_options(loop.config())), settings_(std::move(settings)), owner_(owner) {
  if (settings_.url.tls && settings_.tls) use_tls(settings_.tls, settings_.url.host);
}

RelayClient::~RelayClient() = default;

void RelayClient::start() {
  // The quiet-upstream limit counts from here: while resolving and connecting only the setup
  // timeout applies (a stale 0 closed a connect still under way at the first tick).
  last_receive_ms_ = loop_.now_ms();
  if (settings_.url.tls && !settings_.tls) {
    // Never plain RTMP to an rtmps:// peer. (close() may delete this object: nothing after it.)
    close("no TLS client context (see event=relay_tls_unavailable at start)");
    return;
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  resolve_.data = this;
  const std::string port = std::to_string(settings_.url.port);
  retain();  // until on_resolved
  int rc = uv_getaddrinfo(loop_.loop(), &resolve_, &RelayClient::on_resolved, settings_.url.host.c_str(), port.c_str(),
                          &hints);
  if (rc != 0) {
    close(std::string("resolve failed: ") + uv_strerror(rc));
    release();
  }
}

void RelayClient::on_resolved(uv_getaddrinfo_t* req, int status, addrinfo* res) {
  auto* self = static_cast<RelayClient*>(req->data);
  Ref keep = self->take_retained();
  if (self->closing()) {
    uv_freeaddrinfo(res);
    return;
  }
  if (status < 0 || res == nullptr) {
    uv_freeaddrinfo(res);
    self->close(std::string("resolve failed: ") + uv_strerror(status));
    return;
  }
  int rc = self->connect(res->ai_addr);
  uv_freeaddrinfo(res);
  if (rc != 0) self->close(std::string("connect failed: ") + uv_strerror(rc));
}

void RelayClient::on_open() {
  last_receive_ms_ = loop_.now_ms();
  session_.connect(settings_.url.app, settings_.url.tc_url);
  request_flush();
}

void RelayClient::on_session_event(protocol::SessionEvent& ev) {
  if (auto* r = std::get_if<protocol::ResultEvent>(&ev)) return on_result(*r);
  if (auto* c = std::get_if<protocol::StreamCreatedEvent>(&ev)) {
    stream_id_ = c->stream_id;
    if (settings_.role == Role::Push) {
      session_.publish(stream_id_, settings_.stream_name, "live");
    } else {
      session_.set_buffer_length(stream_id_, 1000);
      session_.play(stream_id_, settings_.stream_name, -1000);
    }
    return;
  }
  if (auto* s = std::get_if<protocol::StatusEvent>(&ev)) return on_status(*s);
  if (auto* m = std::get_if<protocol::MediaEvent>(&ev)) {
    if (settings_.role == Role::Pull && live_ && owner_) {
      media_flowing_ = true;
      owner_->relay_media(*this, m->message);
    }
    return;
  }
}

void RelayClient::on_result(const protocol::ResultEvent& e) {
  if (connected_ || e.command.transaction_id != connect_tx_) return;  // replies to releaseStream, FCPublish
  if (e.error) {
    std::string why;
    if (!e.command.args.empty()) why = e.command.args[0].get_string("description");
    close("connect refused" + (why.empty() ? std::string() : ": " + why));
    return;
  }
  connected_ = true;
  if (settings_.role == Role::Push) {
    // As OBS and FFmpeg do: some platforms wait for FCPublish before they take the publish.
    const protocol::amf::Value args[] = {protocol::amf::Value::string(settings_.stream_name)};
    session_.send_command(0, "releaseStream", 0, protocol::amf::Value::null(), args);
    session_.send_command(0, "FCPublish", 0, protocol::amf::Value::null(), args);
  }
  session_.create_stream();
}

void RelayClient::on_status(const protocol::StatusEvent& e) {
  const std::string code = e.code();
  if (e.name != "onStatus") return;  // onFCPublish / onFCUnpublish: informative
  using protocol::Status;
  const auto is = [&code](Status s) { return code == protocol::status_code(s); };
  if (settings_.role == Role::Push) {
    if (is(Status::PublishStart)) return go_live();
    if (e.level() == "error" || is(Status::PublishBadName)) {
      close("publish refused: " + code + " " + e.info.get_string("description"));
    }
    return;
  }
  if (is(Status::PlayStart) || is(Status::PlayPublishNotify)) {
    if (!live_) return go_live();
    if (is(Status::PlayPublishNotify) && owner_) owner_->relay_live(*this);
    return;
  }
  if (is(Status::PlayUnpublishNotify) || is(Status::PlayStop)) {
    media_flowing_ = false;
    if (owner_) owner_->relay_source_end(*this);
    return;
  }
  if (e.level() == "error") close("play refused: " + code + " " + e.info.get_string("description"));
}

void RelayClient::go_live() {
  live_ = true;
  if (settings_.role == Role::Push && settings_.hub && settings_.registry) {
    sink_ = std::make_unique<RelaySink>(*this, *settings_.registry, settings_.source_key, *settings_.hub,
                                        *settings_.queue, stream_id_, settings_.stream_name);
    request_flush();
  }
  if (owner_) owner_->relay_live(*this);
}

void RelayClient::finish_push() {
  if (ending_ || closing_soon()) return;
  ending_ = true;
  if (sink_) {
    sink_->end();  // the end goes out behind the frames queued
  } else {
    close("source ended");
  }
}

void RelayClient::detach(const std::string& why, Owner* drain) {
  owner_ = nullptr;
  if (settings_.role == Role::Push && sink_ && !closing_soon() && drain) {
    owner_ = drain;
    drain->relay_adopted(*this);
    finish_push();
    return;
  }
  close(why);
}

bool RelayClient::fill(WriteBatch& batch, size_t max_bytes) {
  append_control_output(batch);
  if (!sink_) return false;
  if (batch.bytes() >= max_bytes) return true;
  return sink_->fill(batch, max_bytes - batch.bytes());
}

void RelayClient::on_nothing_to_write() {
  if (closing_after_write_) close("source ended");
}

void RelayClient::on_written(bool) {
  if (closing_after_write_ && !session_.has_output() && write_queue_bytes() == 0) close("source ended");
}

void RelayClient::on_tick(uint64_t now_ms) {
  if (closing()) return;
  if (!live_ && now_ms - started_ms() > settings_.setup_timeout_ms) {
    close(connected_                  ? "no answer to publish/play"
          : session_.handshake_done() ? "connect timeout"
                                      : "connection timeout");
    return;
  }
  // A pull whose stream was flowing and that hears nothing more is dead (an upstream that waits
  // for its publisher only pings, as rarely as once a minute).
  const uint64_t quiet_ms = media_flowing_ ? settings_.idle_timeout_ms : 3 * settings_.idle_timeout_ms;
  if (settings_.role == Role::Pull && now_ms - last_receive_ms_ > quiet_ms) {
    close("upstream sent nothing for " + std::to_string(quiet_ms / 1000) + "s");
    return;
  }
  if (ending_ && now_ms - last_write_ms() > 5000) close("source ended (target did not drain)");
}

void RelayClient::on_close(const std::string& reason) {
  sink_.reset();
  if (owner_) {
    Owner* o = owner_;
    owner_ = nullptr;
    o->relay_closed(*this, reason);
  }
}

}  // namespace sluice::server
