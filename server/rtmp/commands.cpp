// RtmpConnection: what the server does for each RTMP event (connect, publish, play, ...).
#include <algorithm>

#include "server/cluster/cluster_service.hpp"
#include "server/io/guard_counters.hpp"
#include "server/io/logging.hpp"
#include "server/live/live_join.hpp"
#include "server/live/stream_registry.hpp"
#include "server/live/takeover.hpp"
#include "server/rtmp/connection.hpp"
#include "server/rtmp/live_player.hpp"
#include "server/ingest/live_publisher.hpp"
#include "server/ingest/publish_claim.hpp"
#include "server/rtmp/vod_player.hpp"
#include "server/vod/files.hpp"

namespace sluice::server {

void RtmpConnection::handle_event(protocol::SessionEvent& event) {
  std::visit(
      [this](auto& e) {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, protocol::ConnectEvent>) {
          on_connect(e);
        } else if constexpr (std::is_same_v<T, protocol::PublishEvent>) {
          on_publish(e);
        } else if constexpr (std::is_same_v<T, protocol::PlayEvent>) {
          on_play(e);
        } else if constexpr (std::is_same_v<T, protocol::PauseEvent>) {
          on_pause(e);
        } else if constexpr (std::is_same_v<T, protocol::ReceiveMediaEvent>) {
          on_receive_media(e);
        } else if constexpr (std::is_same_v<T, protocol::CloseStreamEvent>) {
          on_close_stream(e.stream_id, e.deleted ? "deleteStream" : "closeStream");
        } else if constexpr (std::is_same_v<T, protocol::UnpublishEvent>) {
          on_unpublish(e);
        } else if constexpr (std::is_same_v<T, protocol::MediaEvent>) {
          on_media(e);
        } else if constexpr (std::is_same_v<T, protocol::SeekEvent>) {
          on_seek(e);
        } else if constexpr (std::is_same_v<T, protocol::GetStreamLengthEvent>) {
          on_get_stream_length(e);
        } else if constexpr (std::is_same_v<T, protocol::SetBufferLengthEvent>) {
          if (auto* p = find_player(e.stream_id)) p->set_buffer_length(e.buffer_ms);
          if (auto* v = find_vod_player(e.stream_id)) v->set_buffer_length(e.buffer_ms);
        } else if constexpr (std::is_same_v<T, protocol::CreateStreamRefusedEvent>) {
          GuardCounters::bump(GuardEvent::RtmpStreamsPerConnection);
          if (log_limit_.allow(loop_.now_ms(), suppressed_logs_)) {
            SLUICE_LOG_WARN(
                "conn={} peer={} event=create_stream_refused reason=\"rtmp.limits.streams_per_connection={}\" "
                "suppressed={}",
                id(), peer(), config().rtmp.limits.streams_per_connection, suppressed_logs_);
          }
        } else if constexpr (std::is_same_v<T, protocol::StreamIdRefusedEvent>) {
          on_stream_id_refused(e);
        } else if constexpr (std::is_same_v<T, protocol::CommandEvent>) {
          SLUICE_LOG_DEBUG("conn={} event=ignored_command name={}", id(), e.command.name);
        }
      },
      event);
}

void RtmpConnection::on_connect(protocol::ConnectEvent& e) {
  const config::AppConfig* app = config().find_app(e.connect.app);
  if (!app) {
    // librtmp (rtmpdump, GStreamer rtmpsrc) splits rtmp://host/vod/mp4:sub/file.mp4 into the app
    // "vod/mp4:sub" and the name "file.mp4": the app is the first segment, the rest belongs to
    // every stream name of this connection.
    size_t slash = e.connect.app.find('/');
    if (slash != std::string::npos) {
      app = config().find_app(std::string_view(e.connect.app).substr(0, slash));
      if (app) stream_prefix_ = e.connect.app.substr(slash + 1) + "/";
    }
  }
  if (!app) {
    SLUICE_LOG_WARN("conn={} peer={} event=connect_rejected app=\"{}\" reason=\"unknown app\"", id(), peer(),
                    e.connect.app);
    session_.reject_connect("Unknown application '" + e.connect.app + "'.");
    request_flush();
    return;
  }
  app_ = app->name;
  ask([&](AccessDone done) { return services_.publish.gate.connect(hook_event("", ""), std::move(done)); },
      [this](AccessOutcome&& o) { finish_connect(std::move(o)); });
}

void RtmpConnection::on_publish(protocol::PublishEvent& e) {
  if (!stream_prefix_.empty()) e.publish.name = stream_prefix_ + e.publish.name;
  const config::AppConfig* app = config().find_app(app_);
  const std::string& name = e.publish.name;
  if (std::string_view problem = app ? stream_name_problem(name) : "no app"; !problem.empty()) {
    GuardCounters::bump(GuardEvent::BadStreamName);
    session_.reject_publish(e.stream_id, protocol::Status::PublishBadName,
                            "Invalid stream name: " + std::string(problem) + ".");
    SLUICE_LOG_WARN("conn={} peer={} event=publish_rejected app={} stream=\"{}\" reason=\"invalid name: {}\"", id(),
                    peer(), app_, printable(name), problem);
    session_.close_after_flush();
    return;
  }
  if (app->type != config::AppType::Live) {
    session_.reject_publish(e.stream_id, protocol::Status::PublishRejected,
                            "Publishing is not allowed: app '" + app->name + "' does not accept publishing.");
    SLUICE_LOG_WARN("conn={} peer={} event=publish_rejected app={} stream={} reason=\"vod app\"", id(), peer(), app_,
                    name);
    session_.close_after_flush();
    return;
  }
  if (find_publisher(e.stream_id) || find_player(e.stream_id)) {
    session_.reject_publish(e.stream_id, protocol::Status::PublishBadName, "Stream id already in use.");
    return;
  }
  HookEvent ev = hook_event(name, e.publish.query);
  ask(
      [&](AccessDone done) {
        return services_.publish.gate.admit(AccessAction::Publish, *app, peer_address(), ev, std::move(done));
      },
      [this, e, app = loop_.keep(*app)](AccessOutcome&& o) { finish_publish(e, app, std::move(o)); });
}

void RtmpConnection::finish_publish(const protocol::PublishEvent& e, const config::AppRef& app, AccessOutcome&& o) {
  if (!o.allowed()) return refuse_admission(e.stream_id, true, e.publish.name, o);
  // server/ingest/publish_claim.hpp: the answer may come later (the cluster, another loop); the
  // connection waits for it as for a hook.
  auto held = std::make_shared<AccessOutcome>(std::move(o));
  auto claim = std::make_shared<PublishClaim>();
  ask(
      [this, app, held, claim](AccessDone done) {
        claim_publish(
            services_.publish, *app, *this, held->name, [this, keep = Ref(this)] { return !closing(); },
            [claim, done = std::move(done)](PublishClaim c) {
              *claim = std::move(c);
              done(AccessOutcome{});
            });
        return uint64_t{0};
      },
      [this, e, app, held, claim](AccessOutcome&&) { publish_here(e, *app, std::move(*held), *claim); });
}

void RtmpConnection::publish_here(const protocol::PublishEvent& e, const config::AppConfig& app, AccessOutcome&& o,
                                  const PublishClaim& claim) {
  const std::string& name = o.name;
  if (claim.refusal == PublishRefusal::Full) {
    GuardCounters::bump(GuardEvent::StreamsTotal);  // a play's refusal is counted where its join failed
    return refuse_for_streams_total(e.stream_id, name, true);
  }
  if (!claim.granted()) {
    session_.reject_publish(e.stream_id, protocol::Status::PublishBadName, publish_refusal_text(app, name, claim));
    const char* why = claim.refusal == PublishRefusal::BadName     ? "hook renamed to an invalid name: "
                      : claim.refusal == PublishRefusal::OtherNode ? "owned by node "
                                                                   : "already publishing";
    SLUICE_LOG_WARN("conn={} peer={} event=publish_rejected app={} stream=\"{}\" reason=\"{}{}\"", id(), peer(), app_,
                    printable(name), why, claim.detail);
    session_.close_after_flush();
    return;
  }
  note_lifetime(o.lifetime_s);
  session_.accept_publish(e.stream_id, name);
  publishers_.push_back(start_publisher(*this, app, e.stream_id, name, claim,
                                        ticket_for(AccessAction::Publish, name, e.publish.query, std::move(o.seat)),
                                        o.push));
  const uint32_t takeovers = claim.handover.takeovers;
  SLUICE_LOG_INFO("conn={} peer={} event=publish app={} stream={} type={}{}{}", id(), peer(), app_, name,
                  e.publish.type, name != e.publish.name ? " renamed_from=" + e.publish.name : "",
                  takeovers != 0 ? " takeovers=" + std::to_string(takeovers) : "");
}

void RtmpConnection::end_replaced_publisher(uint32_t stream_id, const std::string& why, bool same_connection) {
  auto pub =
      std::find_if(publishers_.begin(), publishers_.end(), [&](const auto& p) { return p->stream_id() == stream_id; });
  if (pub == publishers_.end()) return;
  const std::string name = (*pub)->name();
  SLUICE_LOG_WARN("conn={} peer={} event=unpublish app={} stream={} reason=\"{}\"", id(), peer(), app_, name, why);
  (*pub)->ticket.set_end_reason(why);
  publishers_.erase(pub);
  // An error status: ffmpeg prints its description ("Server error: ...") and stops.
  session_.send_status(stream_id, protocol::Status::PublishBadName, "Stream '" + name + "' was " + why + ".");
  request_flush();
  if (same_connection) return;  // the same client published the name again on another stream
  // Its media from now on is dropped (no publisher has its stream id). The connection closes a
  // second or two later (on_tick), not right behind the status: a live encoder reads the status
  // before its next write would meet the reset of a closed socket; a dead one is closed all the same.
  replaced_at_ms_ = loop_.now_ms();
}

void RtmpConnection::on_play(protocol::PlayEvent& e) {
  if (!stream_prefix_.empty()) e.play.name = stream_prefix_ + e.play.name;
  const config::AppConfig* app = config().find_app(app_);
  // VOD names are file paths, checked by the path resolver (they may contain spaces).
  if (app && app->type == config::AppType::Vod) {
    on_play_vod(*app, e);
    return;
  }
  const std::string& name = e.play.name;
  if (std::string_view problem = app ? stream_name_problem(name) : "no app"; !problem.empty()) {
    GuardCounters::bump(GuardEvent::BadStreamName);
    session_.send_status(e.stream_id, protocol::Status::PlayStreamNotFound,
                         "Invalid stream name: " + std::string(problem) + ".");
    if (log_limit_.allow(loop_.now_ms(), suppressed_logs_)) {
      SLUICE_LOG_WARN(
          "conn={} peer={} event=play_rejected app={} stream=\"{}\" reason=\"invalid name: {}\" suppressed={}", id(),
          peer(), app_, printable(name), problem, suppressed_logs_);
    }
    return;
  }
  on_play_live(*app, e);
}

void RtmpConnection::on_play_live(const config::AppConfig& app, protocol::PlayEvent& e) {
  if (find_publisher(e.stream_id)) {
    session_.send_status(e.stream_id, protocol::Status::PlayFailed, "Stream id is publishing.");
    return;
  }
  HookEvent ev = hook_event(e.play.name, e.play.query);
  ask(
      [&](AccessDone done) {
        return services_.publish.gate.admit(AccessAction::Play, app, peer_address(), ev, std::move(done));
      },
      [this, e, app = loop_.keep(app)](AccessOutcome&& o) { finish_play_live(e, *app, std::move(o)); });
}

void RtmpConnection::finish_play_live(const protocol::PlayEvent& e, const config::AppConfig& app, AccessOutcome&& o) {
  if (!o.allowed()) return refuse_admission(e.stream_id, false, e.play.name, o);
  const std::string& name = o.name;
  LiveJoin join = check_live_join(registry(), app, name);
  if (join.outcome == LiveJoin::Outcome::BadName) {
    session_.send_status(e.stream_id, protocol::Status::PlayStreamNotFound,
                         "Invalid stream name from the on_play hook.");
    return;
  }
  if (join.outcome == LiveJoin::Outcome::NotLive) {
    session_.send_status(e.stream_id, protocol::Status::PlayStreamNotFound, "No stream '" + name + "'.");
    return;
  }
  // A second play on the same stream id replaces the first (Flash does this to switch streams).
  std::erase_if(players_, [&](const auto& p) { return p->stream_id() == e.stream_id; });
  media::StreamHub* h = live_join_hub(registry(), app, join.key);
  if (!h) {
    refuse_for_streams_total(e.stream_id, name, false);
    return;
  }
  note_lifetime(o.lifetime_s);
  session_.start_play(e.stream_id, name, e.play.reset, false);
  players_.push_back(std::make_unique<LivePlayer>(*this, e.stream_id, join.key, name, *h));
  players_.back()->ticket = ticket_for(AccessAction::Play, name, e.play.query, std::move(o.seat));
  SLUICE_LOG_INFO("conn={} peer={} event=play app={} stream={} live={}", id(), peer(), app_, name, join.state);
}

void RtmpConnection::refuse_for_streams_total(uint32_t stream_id, const std::string& name, bool publish) {
  const char* why = "The server holds its maximum of streams (rtmp.limits.max_streams).";
  if (publish) {
    session_.reject_publish(stream_id, protocol::Status::PublishBadName, why);
  } else {
    session_.send_status(stream_id, protocol::Status::PlayFailed, why);
  }
  if (log_limit_.allow(loop_.now_ms(), suppressed_logs_)) {
    SLUICE_LOG_WARN(
        "conn={} peer={} event={}_rejected app={} stream={} reason=\"rtmp.limits.max_streams={}\" suppressed={}", id(),
        peer(), publish ? "publish" : "play", app_, name, config().rtmp.limits.max_streams, suppressed_logs_);
  }
}

void RtmpConnection::on_stream_id_refused(const protocol::StreamIdRefusedEvent& e) {
  GuardCounters::bump(GuardEvent::RtmpUnknownStreamId);
  if (log_limit_.allow(loop_.now_ms(), suppressed_logs_)) {
    SLUICE_LOG_WARN("conn={} peer={} event=stream_id_refused command={} stream_id={} suppressed={}", id(), peer(),
                    e.command, e.stream_id, suppressed_logs_);
  }
}

namespace {

// A refused name is logged by its start and length (a hostile one may be megabytes), with
// control bytes escaped so it cannot forge a log line.
std::string name_for_log(const std::string& name) {
  constexpr size_t kShown = 64;
  if (name.size() <= kShown) return printable(name, kShown);
  return printable(name, kShown) + "(" + std::to_string(name.size()) + " bytes)";
}

}  // namespace

void RtmpConnection::refuse_vod_play(uint32_t stream_id, GuardEvent event, const std::string& name,
                                     const std::string& description) {
  GuardCounters::bump(event);
  session_.send_status(stream_id, protocol::Status::PlayFailed, description);
  request_flush();
  uint64_t suppressed = 0;
  LogRateLimit& limit = event == GuardEvent::VodNameTooLong ? vod_name_refusal_log_ : vod_playlist_refusal_log_;
  if (!limit.allow(loop_context().now_ms(), suppressed)) return;
  size_t row = static_cast<size_t>(event);
  SLUICE_LOG_WARN("conn={} peer={} event=vod_play_refused app={} guard={} stream=\"{}\" reason=\"{}\" suppressed={}",
                  id(), peer(), app_, kGuardEvents[row].name, name_for_log(name), description, suppressed);
}

void RtmpConnection::on_play_vod(const config::AppConfig& app, protocol::PlayEvent& e) {
  if (find_publisher(e.stream_id)) {
    session_.send_status(e.stream_id, protocol::Status::PlayFailed, "Stream id is publishing.");
    return;
  }
  // Checked before anything keeps the name: the playlist, the logs, the file lookup.
  if (e.play.name.size() > app.name_max_bytes) {
    return refuse_vod_play(
        e.stream_id, GuardEvent::VodNameTooLong, e.play.name,
        "Stream name longer than " + std::to_string(app.name_max_bytes) + " bytes (name_max_bytes).");
  }
  HookEvent ev = hook_event(e.play.name, e.play.query);
  ask(
      [&](AccessDone done) {
        return services_.publish.gate.admit(AccessAction::Play, app, peer_address(), ev, std::move(done));
      },
      [this, e, app = loop_.keep(app)](AccessOutcome&& o) { finish_play_vod(e, *app, std::move(o)); });
}

void RtmpConnection::finish_play_vod(const protocol::PlayEvent& e, const config::AppConfig& app, AccessOutcome&& o) {
  if (!o.allowed()) return refuse_admission(e.stream_id, false, e.play.name, o);
  VodPlayer* player = find_vod_player(e.stream_id);
  if (!player) {
    std::erase_if(players_, [&](const auto& p) { return p->stream_id() == e.stream_id; });
    vod_players_.push_back(std::make_unique<VodPlayer>(*this, e.stream_id, VodRoot{app.root, app.follow_symlinks},
                                                       app.playlist_max_entries));
    player = vod_players_.back().get();
  }
  // The first admitted item's seat and done hook stand for the whole playlist of this stream id.
  if (o.seat.held()) player->ticket = ticket_for(AccessAction::Play, o.name, e.play.query, std::move(o.seat));
  note_lifetime(o.lifetime_s);
  // FFmpeg sends start -2000 (live or recorded) for VOD too: anything negative means "from the start".
  VodPlayer::Item item{o.name, e.play.start, e.play.duration};
  if (!player->play(std::move(item), e.play.reset)) {
    return refuse_vod_play(
        e.stream_id, GuardEvent::VodPlaylistFull, e.play.name,
        "Playlist full: at most " + std::to_string(app.playlist_max_entries) + " queued items (playlist_max_entries).");
  }
  SLUICE_LOG_INFO("conn={} peer={} event=play app={} stream=\"{}\" start_ms={} duration_ms={} reset={}", id(), peer(),
                  app_, printable(o.name), e.play.start, e.play.duration, e.play.reset);
}

void RtmpConnection::on_pause(const protocol::PauseEvent& e) {
  if (auto* p = find_player(e.stream_id)) p->set_paused(e.pause, static_cast<uint32_t>(e.position_ms));
  if (auto* v = find_vod_player(e.stream_id)) v->pause(e.pause);
}

void RtmpConnection::on_seek(const protocol::SeekEvent& e) {
  if (auto* v = find_vod_player(e.stream_id)) {
    v->seek(e.position_ms);
  } else {
    session_.send_status(e.stream_id, protocol::Status::SeekFailed, "Live streams cannot seek.");
  }
}

void RtmpConnection::on_get_stream_length(const protocol::GetStreamLengthEvent& e) {
  const config::AppConfig* app = config().find_app(app_);
  if (!app || app->type != config::AppType::Vod) {
    session_.reply_stream_length(e.transaction_id, 0);  // live streams have no length
    return;
  }
  double txn = e.transaction_id;
  std::string name = stream_prefix_ + e.name;
  if (name.size() > app->name_max_bytes) {
    GuardCounters::bump(GuardEvent::VodNameTooLong);
    session_.reply_stream_length(txn, 0);
    return;
  }
  services_.vod_files.open(VodRoot{app->root, app->follow_symlinks}, name,
                           [this, ref = Ref(this), txn](Result<VodFilePtr> f) {
                             if (closing()) return;
                             session_.reply_stream_length(txn, f ? (*f)->index.duration_ms / 1000.0 : 0);
                             request_flush();
                           });
}

void RtmpConnection::on_receive_media(const protocol::ReceiveMediaEvent& e) {
  if (auto* p = find_player(e.stream_id)) p->set_receive(e.video, e.enabled);
}

void RtmpConnection::on_close_stream(uint32_t stream_id, const char* why) {
  auto pub =
      std::find_if(publishers_.begin(), publishers_.end(), [&](const auto& p) { return p->stream_id() == stream_id; });
  if (pub != publishers_.end()) {
    SLUICE_LOG_INFO("conn={} peer={} event=unpublish app={} stream={} reason={}", id(), peer(), app_, (*pub)->name(),
                    why);
    (*pub)->ticket.set_end_reason(why);
    publishers_.erase(pub);
  }
  auto play =
      std::find_if(players_.begin(), players_.end(), [&](const auto& p) { return p->stream_id() == stream_id; });
  if (play != players_.end()) {
    SLUICE_LOG_INFO("conn={} peer={} event=stop app={} stream={} reason={}", id(), peer(), app_, (*play)->name(), why);
    (*play)->ticket.set_end_reason(why);
    players_.erase(play);
  }
  auto vod = std::find_if(vod_players_.begin(), vod_players_.end(),
                          [&](const auto& p) { return p->stream_id() == stream_id; });
  if (vod != vod_players_.end()) {
    SLUICE_LOG_INFO("conn={} peer={} event=stop app={} stream=\"{}\" reason={}", id(), peer(), app_, (*vod)->name(),
                    why);
    vod_players_.erase(vod);
  }
}

void RtmpConnection::on_unpublish(const protocol::UnpublishEvent& e) {
  auto pub = std::find_if(publishers_.begin(), publishers_.end(), [&](const auto& p) { return p->name() == e.name; });
  if (pub == publishers_.end()) return;
  uint32_t stream_id = (*pub)->stream_id();
  SLUICE_LOG_INFO("conn={} peer={} event=unpublish app={} stream={} reason=FCUnpublish", id(), peer(), app_, e.name);
  (*pub)->ticket.set_end_reason("FCUnpublish");
  publishers_.erase(pub);
  session_.reply_unpublish(stream_id, e.name);
}

void RtmpConnection::on_media(protocol::MediaEvent& e) {
  if (auto* p = find_publisher(e.message.stream_id)) p->on_message(e.message);
}

LivePlayer* RtmpConnection::find_player(uint32_t stream_id) {
  for (auto& p : players_)
    if (p->stream_id() == stream_id) return p.get();
  return nullptr;
}

VodPlayer* RtmpConnection::find_vod_player(uint32_t stream_id) {
  for (auto& p : vod_players_)
    if (p->stream_id() == stream_id) return p.get();
  return nullptr;
}

LivePublisher* RtmpConnection::find_publisher(uint32_t stream_id) {
  for (auto& p : publishers_)
    if (p->stream_id() == stream_id) return p.get();
  return nullptr;
}

}  // namespace sluice::server
