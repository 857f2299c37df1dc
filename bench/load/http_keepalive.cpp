#include "bench/load/http_keepalive.hpp"

#include <strings.h>

#include <algorithm>
#include <array>
#include <utility>

#include "bench/load/clock.hpp"

namespace sluice::bench {

namespace {

constexpr size_t kReadBufferSize = 64 * 1024;
alignas(64) std::array<char, kReadBufferSize> g_read_buffer;
uint64_t g_reads = 0;
uint64_t g_read_bytes = 0;

std::string uv_error_text(const char* what, int status) { return std::string(what) + ": " + uv_strerror(status); }

}  // namespace

// One TCP connection. Detached (owner null) once closed; its close callback frees it.
struct HttpKeepAlive::Conn {
  uv_tcp_t tcp{};
  uv_connect_t connect_req{};
  uv_write_t write_req{};
  std::string unsent;  // what uv_write still holds
  HttpKeepAlive* owner = nullptr;
  bool connected = false;
};

HttpKeepAlive::HttpKeepAlive(uv_loop_t* loop, const sockaddr_storage& addr, std::string host_header, Handler& handler)
    : loop_(loop), addr_(addr), host_header_(std::move(host_header)), handler_(handler) {}

HttpKeepAlive::~HttpKeepAlive() { close(); }

uint64_t HttpKeepAlive::total_reads() { return g_reads; }
uint64_t HttpKeepAlive::total_read_bytes() { return g_read_bytes; }

const http_parser_settings& HttpKeepAlive::parser_settings() {
  static const http_parser_settings settings = [] {
    http_parser_settings s;
    http_parser_settings_init(&s);
    s.on_header_field = on_header_field;
    s.on_header_value = on_header_value;
    s.on_headers_complete = on_headers_complete;
    s.on_body = on_body;
    s.on_message_complete = on_message_complete;
    return s;
  }();
  return settings;
}

void HttpKeepAlive::request(const char* method, const std::string& target, const std::string& headers,
                            const std::string& body, size_t keep) {
  busy_ = true;
  asked_ns_ = now_ns();
  retried_ = false;
  keep_ = keep;
  request_ = std::string(method) + " " + target + " HTTP/1.1\r\nHost: " + host_header_ +
             "\r\nUser-Agent: sluice-bench\r\nAccept: */*\r\n" + headers;
  if (!body.empty()) request_ += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  request_ += "\r\n" + body;
  if (conn_ && conn_->connected) {
    send();
  } else if (!conn_) {
    connect();
  }
}

void HttpKeepAlive::connect() {
  auto* c = new Conn;
  c->owner = this;
  uv_tcp_init(loop_, &c->tcp);
  c->tcp.data = c;
  c->connect_req.data = c;
  conn_ = c;
  ++connects_;
  if (int rc = uv_tcp_connect(&c->connect_req, &c->tcp, reinterpret_cast<const sockaddr*>(&addr_), on_connect); rc != 0)
    drop(uv_error_text("connect", rc));
}

void HttpKeepAlive::on_connect(uv_connect_t* req, int status) noexcept {
  auto* c = static_cast<Conn*>(req->data);
  HttpKeepAlive* self = c->owner;
  if (!self) return;  // closed while connecting (status is UV_ECANCELED)
  if (status != 0) {
    self->drop(uv_error_text("connect", status));
    return;
  }
  c->connected = true;
  uv_tcp_nodelay(&c->tcp, 1);
  if (int rc = uv_read_start(reinterpret_cast<uv_stream_t*>(&c->tcp), on_alloc, on_read); rc != 0) {
    self->drop(uv_error_text("read_start", rc));
    return;
  }
  if (self->busy_) self->send();
}

void HttpKeepAlive::send() {
  http_parser_init(&parser_, HTTP_RESPONSE);
  parser_.data = this;
  answer_started_ = complete_ = in_value_ = in_location_ = false;
  field_.clear();
  response_ = HttpResponse{};
  response_.sent_ns = now_ns();
  auto* stream = reinterpret_cast<uv_stream_t*>(&conn_->tcp);
  uv_buf_t buf = uv_buf_init(request_.data(), static_cast<unsigned>(request_.size()));
  const int n = uv_try_write(stream, &buf, 1);
  size_t sent = 0;
  if (n > 0) {
    sent = static_cast<size_t>(n);
    bytes_out_ += sent;
    if (sent == request_.size()) return;
  } else if (n != UV_EAGAIN && n != UV_ENOSYS) {
    drop(uv_error_text("write", n));
    return;
  }
  // Loopback takes a request at once; a full socket is the rare case.
  conn_->unsent = request_.substr(sent);
  bytes_out_ += conn_->unsent.size();
  buf = uv_buf_init(conn_->unsent.data(), static_cast<unsigned>(conn_->unsent.size()));
  conn_->write_req.data = conn_;
  if (int rc = uv_write(&conn_->write_req, stream, &buf, 1, on_write); rc != 0) drop(uv_error_text("write", rc));
}

void HttpKeepAlive::on_write(uv_write_t* req, int status) noexcept {
  auto* c = static_cast<Conn*>(req->data);
  if (!c->owner || status == 0 || status == UV_ECANCELED) return;
  HttpKeepAlive* self = c->owner;
  self->drop(uv_error_text("write", status));
}

void HttpKeepAlive::on_alloc(uv_handle_t*, size_t, uv_buf_t* buf) noexcept {
  buf->base = g_read_buffer.data();
  buf->len = g_read_buffer.size();
}

void HttpKeepAlive::on_read(uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf) noexcept {
  auto* c = static_cast<Conn*>(stream->data);
  HttpKeepAlive* self = c->owner;
  if (!self) return;
  if (nread > 0) {
    ++g_reads;
    g_read_bytes += static_cast<uint64_t>(nread);
    if (!guarded("http read", [&] { self->handle_read(c, buf->base, static_cast<size_t>(nread)); }))
      self->drop("internal error while reading");
  } else if (nread == UV_EOF) {
    if (!guarded("http eof", [&] { self->handle_eof(c); })) self->drop("internal error at end of stream");
  } else if (nread < 0) {
    self->drop(uv_error_text("read", static_cast<int>(nread)));
  }
}

void HttpKeepAlive::handle_read(Conn*, const char* data, size_t len) {
  bytes_in_ += len;
  if (!busy_ || complete_) return;  // nothing was asked: not ours to read
  answer_started_ = true;
  http_parser_execute(&parser_, &parser_settings(), data, len);
  if (complete_) {
    finish();
    return;
  }
  if (const auto err = HTTP_PARSER_ERRNO(&parser_); err != HPE_OK)
    drop(std::string("http: ") + http_errno_name(err) + " (" + http_errno_description(err) + ")");
}

void HttpKeepAlive::handle_eof(Conn* c) {
  if (busy_ && !answer_started_ && !retried_ && c->connected) {
    // The server closed an idle keep-alive connection as the request went out: send it again.
    close();
    busy_ = true;
    retried_ = true;
    connect();
    return;
  }
  if (busy_ && answer_started_ && !complete_) {
    http_parser_execute(&parser_, &parser_settings(), nullptr, 0);  // a close-delimited body ends here
    if (complete_) {
      reusable_ = false;
      finish();
      return;
    }
    drop("server closed the connection in the middle of a response");
    return;
  }
  if (busy_) {
    drop("server closed the connection before the response");
    return;
  }
  close();  // idle: the next get() connects again
}

void HttpKeepAlive::finish() {
  reusable_ = http_should_keep_alive(&parser_) != 0;
  response_.done_ns = now_ns();
  busy_ = false;
  if (!reusable_) close();
  handler_.on_response(response_);
}

void HttpKeepAlive::drop(const std::string& error) {
  const bool was_busy = busy_;
  close();
  if (was_busy) handler_.on_http_error(error);
}

void HttpKeepAlive::close() {
  busy_ = false;
  if (!conn_) return;
  Conn* c = std::exchange(conn_, nullptr);
  c->owner = nullptr;
  uv_close(reinterpret_cast<uv_handle_t*>(&c->tcp), on_closed);
}

void HttpKeepAlive::on_closed(uv_handle_t* handle) noexcept { delete static_cast<Conn*>(handle->data); }

// Header names and values may arrive in pieces: a name is whole when its value starts, and a
// value when the next name starts.
int HttpKeepAlive::on_header_field(http_parser* p, const char* at, size_t len) noexcept {
  auto* self = static_cast<HttpKeepAlive*>(p->data);
  if (self->in_value_) {
    self->field_.clear();
    self->in_value_ = false;
  }
  // Only "Location" is wanted: a longer name is not it, and need not be kept whole.
  const size_t room = self->field_.size() < 16 ? 16 - self->field_.size() : 0;
  if (!guarded("http header", [&] { self->field_.append(at, std::min(len, room)); })) return 1;
  return 0;
}

int HttpKeepAlive::on_header_value(http_parser* p, const char* at, size_t len) noexcept {
  auto* self = static_cast<HttpKeepAlive*>(p->data);
  if (!self->in_value_) {
    self->in_value_ = true;
    self->in_location_ = strcasecmp(self->field_.c_str(), "location") == 0;
  }
  if (self->in_location_ && !guarded("http header", [&] { self->response_.location.append(at, len); })) return 1;
  return 0;
}

int HttpKeepAlive::on_headers_complete(http_parser* p) noexcept {
  auto* self = static_cast<HttpKeepAlive*>(p->data);
  self->response_.status = p->status_code;
  return 0;
}

int HttpKeepAlive::on_body(http_parser* p, const char* at, size_t len) noexcept {
  auto* self = static_cast<HttpKeepAlive*>(p->data);
  HttpResponse& r = self->response_;
  r.body_bytes += len;
  if (r.body.size() < self->keep_) {
    const size_t take = std::min(len, self->keep_ - r.body.size());
    if (!guarded("http body", [&] { r.body.append(at, take); })) return 1;  // stops the parser with an error
  }
  return 0;
}

int HttpKeepAlive::on_message_complete(http_parser* p) noexcept {
  auto* self = static_cast<HttpKeepAlive*>(p->data);
  self->complete_ = true;
  http_parser_pause(p, 1);  // whatever follows would be another response
  return 0;
}

}  // namespace sluice::bench
