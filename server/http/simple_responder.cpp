#include "server/http/simple_responder.hpp"

#include "server/http/connection.hpp"
#include "server/http/util.hpp"

namespace sluice::server {

std::string http_allowed_methods(bool put) { return put ? "GET, HEAD, PUT, OPTIONS" : "GET, HEAD, OPTIONS"; }

std::string http_preflight_headers(bool put) {
  std::string methods = http_allowed_methods(put);
  return "Allow: " + methods + "\r\nAccess-Control-Allow-Origin: *\r\nAccess-Control-Allow-Methods: " + methods +
         "\r\nAccess-Control-Allow-Headers: Range, If-None-Match, If-Modified-Since, If-Range" +
         (put ? ", Authorization, Content-Type" : "") + "\r\nAccess-Control-Max-Age: 86400\r\n";
}

void SimpleResponder::reply(int status, std::string_view content_type, std::string_view body,
                            std::string_view headers) {
  conn_.send_simple(status, content_type, body, headers);
}

void SimpleResponder::error(int status, std::string_view message, std::string_view headers) {
  conn_.send_error(status, message, false, headers);
}

void SimpleResponder::preflight(bool put) { conn_.send_simple(204, {}, {}, http_preflight_headers(put)); }

void SimpleResponder::method_not_allowed(bool put) {
  conn_.send_error(405, put ? "use GET, HEAD or PUT" : "use GET or HEAD", false,
                   "Allow: " + http_allowed_methods(put) + "\r\n" + std::string(kHttpCors));
}

}  // namespace sluice::server
