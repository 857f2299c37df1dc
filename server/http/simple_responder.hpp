// SimpleResponder: an answer that is whole the moment the request is routed: the errors of
// routing (400, 404), the CORS preflight (OPTIONS), 405 with Allow, the built-in page and its 304
// (page.hpp). It queues head and body at once through the connection's head writer and holds
// nothing. The headers it composes are pure functions, unit-tested in
// tests/unit/server/http/simple_responder_test.cpp.
#pragma once

#include <string>
#include <string_view>

#include "server/http/responder.hpp"

namespace sluice::server {

class HttpConnection;

// The methods an app's resources take: "GET, HEAD, OPTIONS", with PUT where uploads are on.
std::string http_allowed_methods(bool put);
// The CORS preflight answer's headers: players on another origin may ask before a GET with a
// Range header (and an upload with its token).
std::string http_preflight_headers(bool put);

class SimpleResponder final : public HttpResponder {
 public:
  explicit SimpleResponder(HttpConnection& conn) : conn_(conn) {}

  const char* activity() const override { return "request"; }

  // The answer as it stands.
  void reply(int status, std::string_view content_type, std::string_view body, std::string_view headers = {});
  // "404 Not Found: message" as text/plain; the connection stays usable.
  void error(int status, std::string_view message, std::string_view headers = {});
  // 204 to OPTIONS on an app's resource.
  void preflight(bool put);
  // 405 with Allow to any other method than GET, HEAD (and PUT where uploads are on).
  void method_not_allowed(bool put);

 private:
  HttpConnection& conn_;
};

}  // namespace sluice::server
