#include "server/http/file_reply.hpp"

namespace sluice::server {

HttpFileMeta http_file_meta(std::string_view rel, uint64_t size, int64_t mtime_ns) {
  HttpFileMeta m;
  m.size = size;
  m.validators = {http_make_etag(size, mtime_ns), mtime_ns / 1'000'000'000};
  m.lines.reserve(160);
  m.lines += "Content-Type: ";
  m.lines += http_content_type_for(rel);
  m.lines += "\r\nAccept-Ranges: bytes\r\n";
  m.validators_at = m.lines.size();
  m.lines += "ETag: ";
  m.lines += m.validators.etag;
  m.lines += "\r\nLast-Modified: ";
  m.lines += http_format_date(m.validators.mtime_s);
  m.lines += "\r\n";
  m.lines += kHttpCors;
  return m;
}

HttpFileReply http_file_reply(const HttpRequest& req, const HttpFileMeta& meta) {
  HttpFileReply out;
  // Most requests carry none of the conditional or Range headers: one look at the names decides.
  bool conditional = false;
  const std::string* range = nullptr;
  for (const auto& [name, value] : req.headers) {
    if (name.starts_with("if-")) conditional = true;
    if (name == "range" && !range) range = &value;
  }
  if (conditional) {
    switch (http_evaluate_preconditions(req, meta.validators)) {
      case HttpPrecondition::NotModified:
        out.status = 304;
        out.headers = meta.lines.substr(meta.validators_at);
        return out;
      case HttpPrecondition::Failed:
        out.status = 412;
        out.error = "precondition failed";
        out.headers = meta.lines.substr(meta.validators_at);
        return out;
      case HttpPrecondition::Proceed: break;
    }
  }
  out.headers = meta.lines;
  out.length = meta.size;
  if (range && req.method == "GET" && req.header_count("range") == 1 &&
      (!conditional || http_if_range_allows(req, meta.validators))) {
    HttpByteRange r;
    switch (http_parse_range(*range, meta.size, r)) {
      case HttpRangeResult::Partial:
        out.status = 206;
        out.first = r.first;
        out.length = r.length();
        out.headers += "Content-Range: bytes " + std::to_string(r.first) + "-" + std::to_string(r.last) + "/" +
                       std::to_string(meta.size) + "\r\n";
        break;
      case HttpRangeResult::Unsatisfiable:
        out.status = 416;
        out.error = "range not satisfiable";
        out.length = 0;
        out.headers = "Content-Range: bytes */" + std::to_string(meta.size) + "\r\n" + meta.lines;
        return out;
      case HttpRangeResult::Whole: break;
    }
  }
  return out;
}

HttpFileReply http_file_reply(const HttpRequest& req, std::string_view rel, uint64_t size, int64_t mtime_ns) {
  return http_file_reply(req, http_file_meta(rel, size, mtime_ns));
}

}  // namespace sluice::server
