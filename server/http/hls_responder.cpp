#include "server/http/hls_responder.hpp"

#include <algorithm>
#include <charconv>

#include "server/access/query.hpp"
#include "server/access_log/access_log.hpp"
#include "server/http/connection.hpp"
#include "server/http/service.hpp"
#include "server/http/util.hpp"
#include "server/io/guard_counters.hpp"
#include "server/io/write_batch.hpp"
#include "server/live/stream_registry.hpp"

namespace sluice::server {

namespace {

constexpr std::string_view kPlaylistType = "Content-Type: application/vnd.apple.mpegurl\r\n";

bool parse_int(std::string_view s, int64_t& out) {
  if (s.empty() || s.size() > 18) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size() && out >= 0;
}

media::hls::Container container_of(const config::AppConfig& app) {
  return app.hls.variant == config::HlsVariant::MpegTs ? media::hls::Container::MpegTs : media::hls::Container::Fmp4;
}

}  // namespace

bool http_hls_target(std::string_view decoded, std::string& stream, std::string& file) {
  const size_t slash = decoded.rfind('/');
  if (slash == std::string_view::npos || slash == 0) return false;
  file = std::string(decoded.substr(slash + 1));
  if (file != "index.m3u8" && !file.ends_with(".ts") && !file.ends_with(".m4s") && !file.ends_with(".mp4")) {
    return false;
  }
  stream = std::string(decoded.substr(0, slash));
  return true;
}

HlsResponder::~HlsResponder() { stop_waiting(); }

void HlsResponder::start(const config::AppConfig& app, std::string stream, std::string file) {
  if (std::string_view problem = stream_name_problem(stream); !problem.empty()) {
    GuardCounters::bump(GuardEvent::BadStreamName);
    return fail(400, "invalid stream name: " + std::string(problem));
  }
  key_ = app.name + "/" + stream;
  HlsService* hls = conn_.service().hls();
  if (!hls) return fail(404, "no HLS here");
  const std::string& query = conn_.request().query;
  query_ = hls_carried_query(query);
  if (file == "index.m3u8") {
    want_ = Want::Playlist;
    if (auto v = query_param(query, "_HLS_msn")) {
      if (!parse_int(*v, block_msn_)) return fail(400, "_HLS_msn must be a media sequence number");
    }
    if (auto v = query_param(query, "_HLS_part")) {
      if (block_msn_ < 0 || !parse_int(*v, block_part_)) return fail(400, "_HLS_part needs _HLS_msn and a part number");
    }
    if (auto v = query_param(query, "_HLS_skip")) skip_ = *v == "YES" || *v == "v2";
    switch (hls->open(app, key_, share_)) {
      case HlsService::Open::NotLive: return fail(404, "stream is not live");
      case HlsService::Open::Full:
        GuardCounters::bump(GuardEvent::StreamsTotal);
        return fail(503, "the server holds its maximum of streams (rtmp.limits.max_streams)");
      case HlsService::Open::Ok: break;
    }
    // The first playlist of a stream may wait for its first segment; a blocking reload three
    // target durations (RFC 8216bis 6.2.5.2).
    const auto snap = share_->snapshot();
    const uint64_t target_ms = uint64_t(snap ? snap->params.target_s : 2) * 1000;
    deadline_ms_ = conn_.loop_context().now_ms() +
                   std::max<uint64_t>(3 * std::max<uint64_t>(target_ms, uint64_t(app.hls.segment.count())), 3000);
  } else {
    want_ = Want::Media;
    if (!media::hls::parse_media_name(file, container_of(app), media_)) return fail(404, "no such HLS resource");
    share_ = hls->directory().find(key_);
    if (!share_) return fail(404, "stream is not live");
    share_->last_request_ms = conn_.loop_context().now_ms();
    ++share_->requests;
    deadline_ms_ = conn_.loop_context().now_ms() + std::max<uint64_t>(3 * uint64_t(app.hls.segment.count()), 3000);
  }
  answer();
}

void HlsResponder::answer() {
  const std::shared_ptr<const HlsSnapshot> s = share_->snapshot();
  seen_version_ = s ? s->version : 0;
  if (want_ == Want::Media) return answer_media(s);
  if (!s || !s->ready) return wait();
  if (block_msn_ >= 0) {
    switch (media::hls::block_answer(s->segments, uint64_t(block_msn_), block_part_, s->params.part_ms)) {
      case media::hls::BlockAnswer::BadRequest:
        return fail(400, "_HLS_msn or _HLS_part too far ahead of the playlist (RFC 8216bis 6.2.5.2)");
      case media::hls::BlockAnswer::Wait: return wait();
      case media::hls::BlockAnswer::Ready: break;
    }
  }
  answer_playlist(*s);
}

void HlsResponder::answer_playlist(const HlsSnapshot& s) {
  stop_waiting();
  const bool delta = skip_ && s.params.low_latency;
  Slice body;
  if (query_.empty()) {
    body = (delta ? s.delta_playlist : s.playlist).share();
  } else {
    media::hls::PlaylistParams p = s.params;
    p.skip = delta;
    p.query = query_;
    body = Slice::copy_of(media::hls::render_playlist(s.segments, p));
  }
  std::string headers(kPlaylistType);
  headers += "Cache-Control: no-cache\r\n";
  const uint64_t size = body.size();
  std::vector<Slice> pieces;
  pieces.push_back(std::move(body));
  send_body(200, std::move(headers), std::move(pieces), size);
}

void HlsResponder::answer_media(const std::shared_ptr<const HlsSnapshot>& s) {
  if (!s) return wait();
  std::vector<Slice> pieces;
  const bool mp4 = s->params.container == media::hls::Container::Fmp4;
  std::string type = mp4 ? "Content-Type: video/mp4\r\n" : "Content-Type: video/mp2t\r\n";
  if (media_.kind == media::hls::MediaName::Kind::Init) {
    auto it = std::find_if(s->inits.begin(), s->inits.end(), [&](const auto& i) { return i.id == media_.msn; });
    if (it == s->inits.end()) return fail(404, "no such initialization segment");
    pieces.push_back(it->bytes.share());
  } else {
    const auto& segs = s->segments;
    const uint64_t first = segs.empty() ? 0 : segs.front().msn;
    const uint64_t next = segs.empty() ? 0 : segs.back().msn + (segs.back().complete ? 1 : 0);
    if (media_.msn < first || media_.msn > next || segs.empty()) return fail(404, "no such segment (gone, or not yet)");
    if (media_.msn == next && segs.back().complete) {
      // The first part of the segment to come: the preload hint after a segment's end.
      if (media_.kind == media::hls::MediaName::Kind::Part && media_.part == 0) return wait();
      if (media_.kind == media::hls::MediaName::Kind::Segment) return wait();
      return fail(404, "no such part");
    }
    const media::hls::Segment& seg = segs[media_.msn - first];
    if (media_.kind == media::hls::MediaName::Kind::Segment) {
      if (!seg.complete) return wait();
      for (const auto& p : seg.parts) pieces.push_back(p.bytes.share());
    } else if (media_.part < seg.parts.size()) {
      pieces.push_back(seg.parts[media_.part].bytes.share());
    } else if (!seg.complete && media_.part == seg.parts.size()) {
      return wait();
    } else {
      return fail(404, "no such part");
    }
  }
  stop_waiting();
  uint64_t total = 0;
  for (const Slice& p : pieces) total += p.size();
  // A segment's URI names other bytes after a restart of the server: caches keep it no longer
  // than it is listed.
  const uint64_t max_age = uint64_t(s->params.window + 1) * s->params.target_s;
  std::string headers = type + "Cache-Control: max-age=" + std::to_string(max_age) + "\r\nAccept-Ranges: bytes\r\n";
  const std::string* range_header = conn_.request().header("range");
  HttpByteRange range;
  HttpRangeResult rr = range_header ? http_parse_range(*range_header, total, range) : HttpRangeResult::Whole;
  if (rr == HttpRangeResult::Unsatisfiable) {
    return conn_.send_error(416, "range not satisfiable", false,
                            std::string(kHttpCors) + "Content-Range: bytes */" + std::to_string(total) + "\r\n");
  }
  if (rr == HttpRangeResult::Whole) return send_body(200, std::move(headers), std::move(pieces), total);
  // The pieces that overlap [first, last], cut to it.
  std::vector<Slice> cut;
  uint64_t at = 0;
  for (const Slice& p : pieces) {
    const uint64_t end = at + p.size();
    if (end > range.first && at <= range.last) {
      const uint64_t from = std::max(range.first, at) - at;
      const uint64_t to = std::min(range.last + 1, end) - at;
      cut.push_back(p.share(from, to - from));
    }
    at = end;
  }
  headers += "Content-Range: bytes " + std::to_string(range.first) + "-" + std::to_string(range.last) + "/" +
             std::to_string(total) + "\r\n";
  send_body(206, std::move(headers), std::move(cut), range.length());
}

void HlsResponder::send_body(int status, std::string headers, std::vector<Slice> pieces, uint64_t length) {
  headers += kHttpCors;
  conn_.write_head(status, headers, HttpConnection::Body::Length, length);
  if (conn_.head_only() || length == 0) return conn_.finish_response();
  share_->bytes_out += length;
  if (access_log_enabled()) {  // the viewer's line in the access log counts what it was sent
    conn_.service().hls_sessions().add_bytes(HlsSessions::viewer(conn_.peer_address(), key_, query_), length);
  }
  body_ = std::move(pieces);
  next_piece_ = 0;
}

bool HlsResponder::fill(WriteBatch& batch, size_t max_bytes) {
  if (body_.empty()) return false;
  size_t added = 0;
  while (next_piece_ < body_.size() && added < max_bytes) {
    added += body_[next_piece_].size();
    batch.add_slice(std::move(body_[next_piece_++]));
  }
  conn_.add_body_bytes(added);
  if (next_piece_ < body_.size()) return true;
  body_.clear();
  conn_.finish_response();
  return false;
}

void HlsResponder::wait() {
  if (!waiting_) {
    waiting_ = true;
    conn_.service().hls()->add_waiter(*share_, this);
  }
  // A snapshot published while this one was being looked at woke nobody here.
  const auto s = share_->snapshot();
  if ((s ? s->version : 0) != seen_version_) answer();
}

void HlsResponder::stop_waiting() {
  if (!waiting_) return;
  waiting_ = false;
  if (HlsService* hls = conn_.service().hls()) hls->remove_waiter(key_, this);
}

void HlsResponder::on_hls_update() {
  if (waiting_) answer();
}

void HlsResponder::on_tick(uint64_t now_ms) {
  if (!waiting_) return;
  if (share_->closed) return fail(404, "the stream's HLS has stopped");
  if (now_ms < deadline_ms_) return;
  fail(503, want_ == Want::Playlist ? "the playlist did not reach the requested part in time"
                                    : "the segment or part did not come in time");
}

void HlsResponder::close() {
  stop_waiting();
  body_.clear();
}

void HlsResponder::fail(int status, std::string_view message) {
  stop_waiting();
  conn_.send_error(status, message, false, kHttpCors);
}

std::string hls_carried_query(std::string_view query) {
  std::string out;
  while (!query.empty()) {
    const size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (pair.empty() || pair.starts_with("_HLS_")) continue;
    if (!out.empty()) out += '&';
    out += pair;
  }
  return out;
}

}  // namespace sluice::server
