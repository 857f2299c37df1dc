// HttpConnection's response heads and whole answers: the status line and the headers every answer
// carries, small bodies copied or shared, error texts, "100 Continue". The rest of the connection
// is in connection.cpp.
#include <charconv>
#include <ctime>
#include <string>

#include "server/http/connection.hpp"
#include "server/http/service.hpp"
#include "server/http/util.hpp"

namespace sluice::server {

namespace {
// The Date header changes once a second; format it once a second.
const std::string& date_now() {
  static thread_local time_t cached_at = 0;
  static thread_local std::string cached;
  time_t now = ::time(nullptr);
  if (now != cached_at) {
    cached_at = now;
    cached = http_format_date(now);
  }
  return cached;
}
}  // namespace

void HttpConnection::write_head(int status, std::string_view headers, Body body, uint64_t length) {
  status_ = status;
  keep_alive_ = keep_alive_ && req_.keep_alive && !service_.stopping() && !peer_eof_ && body != Body::UntilClose;
  // Nagle holds a small write while an earlier one is unacknowledged: that delays the answers that
  // follow on a keep-alive connection and a stream's tags. An answer that ends the connection is
  // pushed out whole by the FIN, so one request per connection saves the setsockopt (as nginx).
  if (keep_alive_ || body == Body::Chunked || body == Body::UntilClose) set_nodelay();
  // Straight into the output buffer: no string is built per response.
  auto add = [this](std::string_view s) { out_.insert(out_.end(), s.begin(), s.end()); };
  char digits[24];
  auto number = [&digits](uint64_t n) {
    auto r = std::to_chars(digits, digits + sizeof digits, n);
    return std::string_view(digits, static_cast<size_t>(r.ptr - digits));
  };
  out_.reserve(out_.size() + 160 + headers.size());
  add("HTTP/1.1 ");
  add(number(static_cast<uint64_t>(status)));
  add(" ");
  add(http_status_text(status));
  add("\r\nServer: sluice/" SLUICE_VERSION "\r\nDate: ");
  add(date_now());
  add("\r\n");
  add(headers);
  if (body == Body::Length) {
    add("Content-Length: ");
    add(number(length));
    add("\r\n");
  } else if (body == Body::Chunked) {
    add("Transfer-Encoding: chunked\r\n");
  }
  if (!keep_alive_) {
    add("Connection: close\r\n");
  } else if (!req_.is_http11()) {
    add("Connection: keep-alive\r\n");
  }
  add("\r\n");
  request_flush();
}

bool HttpConnection::simple_head(int status, std::string_view content_type, std::string_view headers, uint64_t length) {
  std::string h;
  if (!content_type.empty()) h = "Content-Type: " + std::string(content_type) + "\r\n";
  h += headers;
  bool no_body = status == 304 || status == 204;
  write_head(status, h, no_body ? Body::None : Body::Length, length);
  return !head_only_ && !no_body;
}

void HttpConnection::send_simple(int status, std::string_view content_type, std::string_view body,
                                 std::string_view headers) {
  if (simple_head(status, content_type, headers, body.size())) {
    out_.insert(out_.end(), body.begin(), body.end());
    response_body_bytes_ += body.size();
  }
  finish_response();
}

void HttpConnection::send_shared(int status, std::string_view content_type, const Slice& body,
                                 std::string_view headers) {
  if (simple_head(status, content_type, headers, body.size())) queue_body(body.share());
  finish_response();
}

void HttpConnection::send_error(int status, std::string_view message, bool close_after, std::string_view headers) {
  if (close_after) keep_alive_ = false;
  std::string body = std::to_string(status) + " " + std::string(http_status_text(status));
  if (!message.empty() && message != http_status_text(status)) body += ": " + std::string(message);
  body += "\n";
  send_simple(status, "text/plain; charset=utf-8", body, headers);
}

void HttpConnection::queue_body(Slice body) {
  if (body.empty()) return;
  response_body_bytes_ += body.size();
  out_slice_bytes_ += body.size();
  out_slices_.push_back({out_.size(), std::move(body)});
  request_flush();
}

void HttpConnection::send_continue() {
  if (!req_.header("expect") || !cycle_.body_unread()) return;
  static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
  out_.insert(out_.end(), kContinue.begin(), kContinue.end());
}

}  // namespace sluice::server
