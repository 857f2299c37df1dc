// The headers SimpleResponder composes: the methods an app's resources allow and the CORS preflight.
#include <doctest/doctest.h>

#include <string>

#include "server/http/simple_responder.hpp"

using namespace sluice::server;

TEST_CASE("allowed methods, with PUT only where uploads are on") {
  CHECK(http_allowed_methods(false) == "GET, HEAD, OPTIONS");
  CHECK(http_allowed_methods(true) == "GET, HEAD, PUT, OPTIONS");
}

TEST_CASE("the CORS preflight: methods, the request headers a player sends, a day's cache") {
  CHECK(http_preflight_headers(false) ==
        "Allow: GET, HEAD, OPTIONS\r\n"
        "Access-Control-Allow-Origin: *\r\n"
        "Access-Control-Allow-Methods: GET, HEAD, OPTIONS\r\n"
        "Access-Control-Allow-Headers: Range, If-None-Match, If-Modified-Since, If-Range\r\n"
        "Access-Control-Max-Age: 86400\r\n");
  CHECK(http_preflight_headers(true) ==
        "Allow: GET, HEAD, PUT, OPTIONS\r\n"
        "Access-Control-Allow-Origin: *\r\n"
        "Access-Control-Allow-Methods: GET, HEAD, PUT, OPTIONS\r\n"
        "Access-Control-Allow-Headers: Range, If-None-Match, If-Modified-Since, If-Range, Authorization, "
        "Content-Type\r\n"
        "Access-Control-Max-Age: 86400\r\n");
}
