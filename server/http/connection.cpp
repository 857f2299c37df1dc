// HttpConnection: socket I/O, the HTTP parser, the request cycle, timeouts (response heads and
// whole answers: connection_answers.cpp). What each request is answered with is in routes.cpp and
// the responders (*_responder.cpp).
#include "server/http/connection.hpp"

#include "protocol/proxy_header.hpp"
#include "server/access_log/access_log.hpp"
#include "server/http/access_line.hpp"
#include "server/http/routes.hpp"
#include "server/http/service.hpp"
#include "server/http/util.hpp"
#include "server/io/guard_counters.hpp"
#include "server/io/logging.hpp"
#include "server/io/uv_handle.hpp"

namespace sluice::server {

namespace {
// A body on a request that takes none (GET, HEAD, ...) is read and dropped up to this size: 413 above.
constexpr uint64_t kMaxDiscardedBody = 64 * 1024;
// The URL alone: 414 above.
constexpr size_t kMaxUrlBytes = 8 * 1024;
// Received and not yet parsed (pipelined requests waiting for their turn): reading stops above it.
constexpr size_t kMaxBufferedInput = 64 * 1024;
// TCP keep-alive probes start after this much silence.
constexpr unsigned kTcpKeepAliveSeconds = 60;
// ... and are turned on once a connection has lived this long: most HTTP connections answer a
// request or a few and are gone well before, and the option costs system calls per connection.
constexpr uint64_t kTcpKeepAliveAfterMs = 2'000;
// Queued responses not yet written: pipelined requests wait above it.
constexpr size_t kMaxQueuedOutput = 256 * 1024;

HttpConnection* self_of(http_parser* p) { return static_cast<HttpConnection*>(p->data); }

// The usual close reason, made once: a string this long would be allocated at every close.
const std::string kResponseComplete = "response complete";

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

}  // namespace

HttpConnection::HttpConnection(HttpService& service, uint64_t id)
    : StreamSocket(service.loop(), id),
      service_(service),
      cycle_(started_ms()),
      last_read_ms_(started_ms()),
      sendfile_(service.loop().loop()),
      tls_file_(service.loop().loop()) {
  http_parser_init(&parser_, HTTP_REQUEST);
  parser_.data = this;
}

void HttpConnection::on_open() { SLUICE_LOG_DEBUG("conn={} proto=http event=accept peer={}", id(), peer()); }

// ---------------------------------------------------------------------------------------------
// Reading and parsing.

void HttpConnection::on_bytes(std::span<const uint8_t> bytes) {
  last_read_ms_ = loop_.now_ms();
  if (cycle_.drops_input()) return;
  if (in_pos_ == in_.size()) {
    in_.clear();
    in_pos_ = 0;
  }
  in_.insert(in_.end(), bytes.begin(), bytes.end());
  process_input();
  if (!closing() && reading() && in_.size() - in_pos_ > kMaxBufferedInput) {
    // The client sends faster than we answer: let TCP push back instead of buffering more.
    stop_reading();
  }
}

void HttpConnection::on_peer_closed() {
  peer_eof_ = true;
  // A live stream to a peer that hung up is pointless, whatever TCP half-close would allow.
  if (cycle_.state() == RequestState::Lingering || flv()) return close("peer closed");
  process_input();  // answer the complete requests that arrived before the end
  if (closing()) return;
  if (cycle_.state() != RequestState::Responding) {
    if (!write_in_flight() && !has_pending_output()) return close("peer closed");
    cycle_.finish_after_write();
  }
  request_flush();
}

bool HttpConnection::responder_takes_body() const {
  return cycle_.state() == RequestState::Responding && responder_ && responder_->takes_body();
}

void HttpConnection::process_input() {
  if (parsing_) return;  // a handler that completes a response at once must not re-enter parsing
  parsing_ = true;
  while (!closing() && cycle_.parses(responder_takes_body())) {
    if (out_.size() + out_slice_bytes_ >= kMaxQueuedOutput) {
      resume_input_ = true;  // after the next write
      break;
    }
    size_t avail = in_.size() - in_pos_;
    if (avail == 0) break;
    size_t n = http_parser_execute(&parser_, &parser_settings(), in_.data() + in_pos_, avail);
    in_pos_ += n;
    http_errno err = HTTP_PARSER_ERRNO(&parser_);
    if (err == HPE_PAUSED) {
      // One request at a time: the parser pauses once a request (or an upload's head) is in.
      http_parser_pause(&parser_, 0);
      if (cycle_.state() == RequestState::Ready) dispatch();
      continue;
    }
    if (err != HPE_OK) {
      int status = parse_error_status();
      std::string why = error_status_ != 0 ? std::string(http_status_text(status)) : http_errno_description(err);
      switch (cycle_.state()) {
        case RequestState::Responding:  // an upload's body
          if (responder_) responder_->on_body_failed(status, why);
          break;
        case RequestState::Finishing:  // an upload that already failed as its body arrived
        case RequestState::Lingering: break;
        default:
          // The connection's first bytes, still all in in_, may be a balancer's PROXY header on a
          // listener without http.proxy_protocol: say so.
          const bool proxy = bytes_in() == in_.size() && protocol::looks_like_proxy_header(std::span<const uint8_t>(
                                                             reinterpret_cast<const uint8_t*>(in_.data()), in_.size()));
          SLUICE_LOG_INFO("conn={} proto=http peer={} event=bad_request status={} error=\"{}{}\"", id(), peer(), status,
                          why, proxy ? " (a PROXY header: this listener has no proxy_protocol)" : "");
          refuse(status, why);
          break;
      }
      break;
    }
    if (n < avail) break;  // cannot happen without an error; never spin
  }
  parsing_ = false;
  if (in_pos_ > 0 && in_pos_ == in_.size()) {
    in_.clear();
    in_pos_ = 0;
  }
  if (!closing() && peer_eof_ && responder_takes_body() && in_pos_ == in_.size()) {
    // The client is gone and its upload body stopped short: nothing of it is kept.
    return close("peer closed during an upload");
  }
  if (!closing() && !reading() && !peer_eof_ && in_.size() - in_pos_ <= kMaxBufferedInput &&
      !(responder_ && responder_->body_backlogged())) {
    start_reading();
  }
}

const http_parser_settings& HttpConnection::parser_settings() {
  static const http_parser_settings settings = [] {
    http_parser_settings s;
    http_parser_settings_init(&s);
    s.on_message_begin = [](http_parser* p) { return self_of(p)->on_message_begin(); };
    s.on_url = [](http_parser* p, const char* at, size_t len) { return self_of(p)->on_url(at, len); };
    s.on_header_field = [](http_parser* p, const char* at, size_t len) { return self_of(p)->on_header_field(at, len); };
    s.on_header_value = [](http_parser* p, const char* at, size_t len) { return self_of(p)->on_header_value(at, len); };
    s.on_headers_complete = [](http_parser* p) { return self_of(p)->on_headers_complete(); };
    s.on_body = [](http_parser* p, const char* at, size_t len) { return self_of(p)->on_body(at, len); };
    s.on_message_complete = [](http_parser* p) { return self_of(p)->on_message_complete(); };
    return s;
  }();
  return settings;
}

int HttpConnection::on_message_begin() {
  request_complete_ = false;
  req_.reset();
  field_.clear();
  last_was_value_ = false;
  header_bytes_ = 0;
  body_bytes_ = 0;
  error_status_ = 0;
  cycle_.begin_request(loop_.now_ms());  // the slowloris clock starts
  return 0;
}

int HttpConnection::on_url(const char* at, size_t len) {
  header_bytes_ += len;
  if (req_.target.size() + len > kMaxUrlBytes) {
    error_status_ = 414;
    return 1;
  }
  req_.target.append(at, len);
  return 0;
}

int HttpConnection::on_header_field(const char* at, size_t len) {
  header_bytes_ += len;
  if (header_bytes_ > kMaxHeaderBytes) {
    error_status_ = 431;
    return 1;
  }
  if (last_was_value_) {
    field_.clear();
    last_was_value_ = false;
  }
  field_.append(at, len);
  return 0;
}

int HttpConnection::on_header_value(const char* at, size_t len) {
  header_bytes_ += len;
  if (header_bytes_ > kMaxHeaderBytes) {
    error_status_ = 431;
    return 1;
  }
  if (!last_was_value_) {
    if (req_.headers.size() >= kMaxHeaderFields) {
      error_status_ = 431;
      return 1;
    }
    for (char& c : field_) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    req_.headers.emplace_back(field_, std::string());
    last_was_value_ = true;
  }
  req_.headers.back().second.append(at, len);
  return 0;
}

int HttpConnection::on_headers_complete() {
  last_read_ms_ = loop_.now_ms();
  for (auto& [k, v] : req_.headers) {
    std::string_view t = trim(v);
    if (t.size() != v.size()) v = std::string(t);  // most values need no trimming: no copy then
  }
  req_.method = http_method_str(static_cast<http_method>(parser_.method));
  req_.version_major = parser_.http_major;
  req_.version_minor = parser_.http_minor;
  req_.keep_alive = http_should_keep_alive(&parser_) != 0 && !parser_.upgrade;
  req_.chunked = (parser_.flags & F_CHUNKED) != 0;
  req_.content_length = (parser_.flags & F_CONTENTLENGTH) ? parser_.content_length : 0;
  req_.has_body = req_.chunked || req_.content_length > 0;
  if (req_.version_major != 1) {
    error_status_ = 505;
    return -1;
  }
  if (req_.target == "*") {
    req_.path = "*";
  } else {
    http_parser_url u;
    http_parser_url_init(&u);
    if (http_parser_parse_url(req_.target.data(), req_.target.size(), 0, &u) != 0 || !(u.field_set & (1 << UF_PATH))) {
      error_status_ = 400;
      return -1;
    }
    req_.path = req_.target.substr(u.field_data[UF_PATH].off, u.field_data[UF_PATH].len);
    if (u.field_set & (1 << UF_QUERY))
      req_.query = req_.target.substr(u.field_data[UF_QUERY].off, u.field_data[UF_QUERY].len);
  }
  // RFC 9112 3.2: a 1.1 request without exactly one Host is a 400 (nginx does the same).
  size_t hosts = req_.header_count("host");
  if (hosts > 1 || (hosts == 0 && req_.is_http11())) {
    error_status_ = 400;
    return -1;
  }
  if (const std::string* expect = req_.header("expect"); expect && !iequals(*expect, "100-continue")) {
    error_status_ = 417;
    return -1;
  }
  // An upload is judged on its head (token, name, size) before a byte of its body is read; the
  // body then streams to a file (upload_responder.cpp). Other requests are answered once whole.
  bool upload = req_.method == "PUT";
  cycle_.head_complete(req_.has_body, upload);  // the slowloris clock stops
  if (upload) {
    http_parser_pause(&parser_, 1);  // dispatched from its head
    return 0;
  }
  // Other requests take no body: a small one is read and dropped (a POST's kept: an SDP offer), a
  // large one refused unread.
  if (req_.content_length > kMaxDiscardedBody) {
    error_status_ = 413;
    return -1;
  }
  return 0;
}

int HttpConnection::on_body(const char* at, size_t len) {
  last_read_ms_ = loop_.now_ms();
  if (responder_takes_body()) {
    int status = responder_->on_body(at, len);
    if (status == 0) return 0;
    error_status_ = status;
    return 1;
  }
  body_bytes_ += len;
  if (body_bytes_ > kMaxDiscardedBody) {
    error_status_ = 413;
    return 1;
  }
  if (req_.method == "POST") req_.body.append(at, len);  // an SDP offer (server/http/webrtc_responder.hpp)
  return 0;
}

int HttpConnection::on_message_complete() {
  bool upload_body = responder_takes_body();
  request_complete_ = true;
  cycle_.message_complete();
  if (upload_body) responder_->on_body_end();
  // One request at a time: parsing stops here until this one is answered.
  http_parser_pause(&parser_, 1);
  return 0;
}

int HttpConnection::parse_error_status() const {
  if (error_status_ != 0) return error_status_;
  switch (HTTP_PARSER_ERRNO(&parser_)) {
    case HPE_HEADER_OVERFLOW: return 431;
    // The parser knows every registered method (PUT, PATCH, PROPFIND, ...; those get 405), so an
    // unknown one is as likely garbage (a TLS hello) as a method: 400 either way.
    default: return 400;
  }
}

void HttpConnection::dispatch() {
  cycle_.dispatched();
  response_started_ms_ = loop_.now_ms();
  response_body_bytes_ = 0;
  status_ = 0;
  head_only_ = req_.method == "HEAD";
  resource_ = req_.path;
  ++service_.requests;
  finished_.reset();
  http_route(*this);
}

// ---------------------------------------------------------------------------------------------
// Responses.

void HttpConnection::refuse(int status, std::string_view message) {
  switch (status) {
    case 400:
    case 417:
    case 505: GuardCounters::bump(GuardEvent::HttpBadRequest); break;
    case 408: GuardCounters::bump(GuardEvent::HttpTimeout); break;
    case 413: GuardCounters::bump(GuardEvent::HttpBodyTooLarge); break;
    case 414: GuardCounters::bump(GuardEvent::HttpUrlTooLong); break;
    case 431: GuardCounters::bump(GuardEvent::HttpHeaderTooLarge); break;
    default: break;  // 503 and 429 are counted where the limit is checked
  }
  request_complete_ = false;  // input may still be coming: linger after the answer
  cycle_.respond_now();
  send_error(status, message, true);
}

void HttpConnection::finish_response() {
  log_request(status_, response_body_bytes_);
  head_only_ = false;
  // A body left unread (an upload refused from its head) cannot be skipped: the cycle finishes.
  cycle_.response_done(loop_.now_ms(), keep_alive_ && !peer_eof_);
  if (responder_) finished_ = std::move(responder_);
  keep_alive_ = true;  // the next response decides for itself
  resume_input_ = true;
  request_flush();
}

void HttpConnection::log_request(int status, uint64_t body_bytes) {
  const uint64_t request_bytes = bytes_in() - std::exchange(access_bytes_in_, bytes_in());
  if (access_log_enabled()) {
    write_access_record(
        http_access_record(*this, status, body_bytes, request_bytes, loop_.now_ms() - response_started_ms_));
  }
  if (req_.method.empty()) return;  // a request that never parsed: logged as bad_request
  const bool routine = responder_ && responder_->routine() && status < 400;
  SLUICE_LOG_INFO_UNLESS(
      routine, "conn={} proto=http peer={} event=request method={} path=\"{}\" status={} bytes={} duration_ms={}", id(),
      peer(), req_.method, req_.path, status, body_bytes, loop_.now_ms() - response_started_ms_);
}

void HttpConnection::reject_overloaded(const std::string& reason) {
  SLUICE_LOG_WARN("conn={} proto=http peer={} event=rejected reason=\"{}\"", id(), peer(), reason);
  keep_alive_ = false;
  refuse(503, "the server is at its connection limit");
}

void HttpConnection::reject_quietly(int status, std::string_view message) {
  keep_alive_ = false;
  refuse(status, message);
}

int HttpConnection::send_file(uv_file file_fd, uint64_t offset, uint64_t length, std::function<void(int)> done) {
  if (tls()) {
    note_write_progress();
    return tls_file_.start(
        file_fd, offset, length,
        [this](std::span<const uint8_t> bytes) {
          response_body_bytes_ += bytes.size();
          write_or_queue(bytes);  // queued and encrypted with the next flush (TLS never writes at once)
        },
        std::move(done));
  }
  uv_os_fd_t fd = -1;
  int rc = uv_fileno(as_handle(tcp()), &fd);
  if (rc != 0) return rc;
  note_write_progress();
  return sendfile_.start(
      fd, file_fd, offset, length,
      [this](uint64_t n) {
        add_bytes_out(n);
        response_body_bytes_ += n;
        note_write_progress();
      },
      std::move(done));
}

void HttpConnection::pause_input() {
  if (reading()) stop_reading();
}

void HttpConnection::resume_input() {
  resume_input_ = true;
  request_flush();
}

void HttpConnection::note_body_progress() { last_read_ms_ = loop_.now_ms(); }

// ---------------------------------------------------------------------------------------------
// Writing.

bool HttpConnection::before_flush() {
  if (resume_input_ && (cycle_.state() != RequestState::Responding || responder_takes_body())) {
    resume_input_ = false;
    process_input();
    if (closing()) return false;
  }
  return !sendfile_.active() && cycle_.state() != RequestState::Lingering;
}

bool HttpConnection::fill(WriteBatch& batch, size_t max_bytes) {
  size_t pos = 0;
  for (QueuedSlice& q : out_slices_) {
    if (q.at > pos) batch.add_bytes(std::span<const uint8_t>(out_).subspan(pos, q.at - pos));
    pos = q.at;
    batch.add_slice(std::move(q.bytes));
  }
  out_slices_.clear();
  out_slice_bytes_ = 0;
  if (pos < out_.size()) batch.add_bytes(std::span<const uint8_t>(out_).subspan(pos));
  out_.clear();
  if (!responder_ || batch.bytes() >= max_bytes) return false;
  return responder_->fill(batch, max_bytes - batch.bytes());
}

void HttpConnection::on_nothing_to_write() {
  if (tls_file_.active()) {
    tls_file_.on_drained();  // the last piece is out: the next one
    return;
  }
  switch (cycle_.state()) {
    case RequestState::Responding:
      if (responder_) responder_->on_written();
      break;
    case RequestState::Finishing: begin_linger(); break;
    default: break;
  }
}

void HttpConnection::on_written(bool async) {
  // The response may move on now (a file body after its head, the linger after the last bytes):
  // a write the ring or uv_try_write completed asks for the flush libuv's callback would do.
  if (!async && !in_delayed_list) request_flush();
}

void HttpConnection::keep_unwritten(std::span<const uint8_t> rest) {
  out_.insert(out_.begin(), rest.begin(), rest.end());
  for (QueuedSlice& q : out_slices_) q.at += rest.size();
}

void HttpConnection::begin_linger() {
  if (cycle_.state() != RequestState::Finishing || closing()) return;
  cycle_.begin_linger(loop_.now_ms());
  if (peer_eof_) return close(kResponseComplete);
  // The client asked for the close and sent its whole request and nothing after it: no unread
  // input can turn the close into a reset that destroys the answer, so close now, as nginx does.
  // Lingering is for answers given while input may still come (refusals, a server stopping).
  if (request_complete_ && !req_.keep_alive && !cycle_.body_unread() && in_pos_ == in_.size() && !service_.stopping()) {
    return close(kResponseComplete);
  }
  // Send our FIN, then read and drop whatever the client still sends until it closes too.
  shutdown_req_.data = this;
  int rc = uv_shutdown(&shutdown_req_, as_stream(tcp()), [](uv_shutdown_t* req, int status) {
    auto* self = owner_of<HttpConnection>(req);
    if (status < 0 && status != UV_ECANCELED && !self->closing()) self->close("shutdown failed");
  });
  if (rc != 0) return close(kResponseComplete);
  start_reading();
}

// ---------------------------------------------------------------------------------------------
// Timeouts and closing.

void HttpConnection::on_tick(uint64_t now) {
  if (closing()) return;
  if (!tcp_keepalive_ && now - started_ms() >= kTcpKeepAliveAfterMs) {
    // A reader waiting for a publisher sends and receives nothing for a long time: TCP keep-alive
    // finds the peers that vanished without a FIN.
    uv_tcp_keepalive(tcp(), 1, kTcpKeepAliveSeconds);
    tcp_keepalive_ = true;
  }
  std::optional<uint64_t> pending;
  if (write_in_flight() || sendfile_.active() || tls_file_.active()) pending = last_write_ms();
  switch (cycle_.timeout(now, last_read_ms_, pending)) {
    case HttpTimeout::None: return;
    case HttpTimeout::Responder:
      if (responder_) responder_->on_tick(now);
      return;
    case HttpTimeout::NoRequest: return close("no request");
    case HttpTimeout::KeepAlive: return close("keep-alive timeout");
    case HttpTimeout::Head:
      SLUICE_LOG_INFO("conn={} proto=http peer={} event=timeout reason=\"request head not complete after {} ms\"", id(),
                      peer(), HttpRequestCycle::kHeaderTimeoutMs);
      return refuse(408, "the request head was not complete in time");
    case HttpTimeout::Body: return refuse(408, "the request body stalled");
    case HttpTimeout::Send: return close("send timeout (the client reads nothing)");
    case HttpTimeout::Linger: return close(kResponseComplete);
  }
}

void HttpConnection::shutdown_gracefully() {
  if (closing()) return;
  if (cycle_.state() == RequestState::Responding) {
    keep_alive_ = false;                 // the answer goes on; the connection closes after it
    if (responder_) responder_->stop();  // a live stream ends after what is queued
    return;
  }
  if (write_in_flight() || has_pending_output()) {
    cycle_.finish_after_write();
    return;
  }
  close("server stopping");
}

void HttpConnection::on_close(const std::string& reason) {
  // A connection that ends between answers, the way HTTP connections do, is at debug: its requests
  // have their lines already (the access log), and a second line per short connection would double
  // what a busy server logs. One that ends otherwise (mid-answer, an error) stays at info.
  const bool routine = cycle_.state() != RequestState::Responding &&
                       (reason == kResponseComplete || reason == "peer closed" || reason == "keep-alive timeout");
  SLUICE_LOG_INFO_UNLESS(
      routine, "conn={} proto=http peer={} event=close reason=\"{}\" bytes_in={} bytes_out={} duration_ms={} tls={}",
      id(), peer(), reason, bytes_in(), bytes_out(), loop_.now_ms() - started_ms(), tls_summary());
  if (cycle_.state() == RequestState::Responding && status_ != 0) log_request(status_, response_body_bytes_);
  service_.on_connection_closed(this);
  retain();
  sendfile_.close([this] { release(); });
  retain();
  tls_file_.close([this] { release(); });
  // The responder stays (inert) until the connection is deleted: work it started may still end.
  if (responder_) responder_->close();
}

}  // namespace sluice::server
