#include "server/http/access_line.hpp"

#include <string>

#include "server/http/connection.hpp"

namespace sluice::server {

AccessRecord http_access_record(const HttpConnection& c, int status, uint64_t body_bytes, uint64_t request_bytes,
                                uint64_t duration_ms) {
  const HttpRequest& req = c.request();
  AccessRecord rec;
  rec.conn = c.id();
  rec.client = access_client(c.peer());
  rec.method = req.method;  // empty for a request that never parsed: "-"
  // The path without the query, which may carry a stream key or a signature.
  rec.target = req.path.empty() ? req.target.substr(0, req.target.find('?')) : req.path;
  rec.protocol = "HTTP/" + std::to_string(req.version_major) + "." + std::to_string(req.version_minor);
  rec.status = status;
  rec.bytes_in = request_bytes;
  rec.bytes_out = body_bytes;
  rec.duration_ms = duration_ms;
  if (const std::string* referer = req.header("referer")) rec.referer = *referer;
  if (const std::string* agent = req.header("user-agent")) rec.user_agent = *agent;
  return rec;
}

}  // namespace sluice::server
