// The built-in page's routes: embedded files, content types, ETag and 304, methods.
#include <doctest/doctest.h>

#include <string>

#include "server/http/page.hpp"

using namespace sluice;
using namespace sluice::server;

namespace {

HttpRequest request(std::string path, std::string method = "GET") {
  HttpRequest r;
  r.method = std::move(method);
  r.path = std::move(path);
  return r;
}

std::string header_value(const std::string& headers, const std::string& name) {
  size_t at = headers.find(name + ": ");
  if (at == std::string::npos) return {};
  size_t start = at + name.size() + 2;
  return headers.substr(start, headers.find("\r\n", start) - start);
}

}  // namespace

TEST_CASE("the nine files are embedded, with their digests") {
  auto files = embedded_web_files();
  // index.html, app.js, publish.html, publish.js, mpegts.js, hls.js, plots.js, uplot.js, uplot.css
  REQUIRE(files.size() == 9);
  for (const auto& f : files) {
    CHECK(f.size > 0);
    CHECK(std::string_view(f.sha256).size() == 64);
    CHECK(f.data[f.size] == 0);  // the NUL after the bytes
  }
  const EmbeddedWebFile* mpegts = http_page_file("/web/mpegts.js");
  REQUIRE(mpegts);
  CHECK(mpegts->size > 100000);
  const EmbeddedWebFile* hls = http_page_file("/web/hls.js");
  REQUIRE(hls);
  CHECK(hls->size > 100000);
  const EmbeddedWebFile* uplot = http_page_file("/web/uplot.js");
  REQUIRE(uplot);
  CHECK(uplot->size > 20000);
  REQUIRE(http_page_file("/web/uplot.css"));
  REQUIRE(http_page_file("/web/plots.js"));
  CHECK(http_page_file("/") == http_page_file("/index.html"));
  REQUIRE(http_page_file("/publish.html"));
  CHECK(http_page_file("/publish.html") != http_page_file("/"));
  REQUIRE(http_page_file("/web/publish.js"));
  CHECK(http_page_file("/publish") == nullptr);
  CHECK(http_page_file("/web/") == nullptr);
  CHECK(http_page_file("/web/app.js.map") == nullptr);
  CHECK(http_page_file("/live/cam.flv") == nullptr);
}

TEST_CASE("GET serves the page and its scripts with their types") {
  auto page = http_page_reply(request("/"));
  REQUIRE(page);
  CHECK(page->status == 200);
  CHECK(page->content_type == "text/html; charset=utf-8");
  CHECK(page->body.find("web/mpegts.js") != std::string_view::npos);
  CHECK(page->body.find("web/app.js") != std::string_view::npos);
  CHECK(header_value(page->headers, "Cache-Control") == "no-cache");
  CHECK(!header_value(page->headers, "Content-Security-Policy").empty());

  auto app = http_page_reply(request("/web/app.js"));
  REQUIRE(app);
  CHECK(app->status == 200);
  CHECK(app->content_type == "text/javascript; charset=utf-8");
  CHECK(header_value(app->headers, "Content-Security-Policy").empty());
  CHECK(header_value(app->headers, "X-Content-Type-Options") == "nosniff");

  auto head = http_page_reply(request("/web/mpegts.js", "HEAD"));
  REQUIRE(head);
  CHECK(head->status == 200);
  CHECK(head->body.size() == http_page_file("/web/mpegts.js")->size);  // the caller sends only the head

  auto publish = http_page_reply(request("/publish.html"));
  REQUIRE(publish);
  CHECK(publish->status == 200);
  CHECK(publish->content_type == "text/html; charset=utf-8");
  CHECK(publish->body.find("web/publish.js") != std::string_view::npos);
  CHECK(!header_value(publish->headers, "Content-Security-Policy").empty());
  auto publish_js = http_page_reply(request("/web/publish.js"));
  REQUIRE(publish_js);
  CHECK(publish_js->content_type == "text/javascript; charset=utf-8");
  CHECK(header_value(publish_js->headers, "Content-Security-Policy").empty());

  CHECK(!http_page_reply(request("/live/cam.flv")));
  CHECK(!http_page_reply(request("/api/v1/server")));
  CHECK(!http_page_reply(request("/index.htm")));
}

TEST_CASE("ETag is the content's hash; If-None-Match gives 304") {
  auto first = http_page_reply(request("/web/mpegts.js"));
  REQUIRE(first);
  std::string etag = header_value(first->headers, "ETag");
  REQUIRE(etag.size() == 18);
  CHECK(etag == "\"" + std::string(std::string_view(http_page_file("/web/mpegts.js")->sha256).substr(0, 16)) + "\"");
  CHECK(etag != header_value(http_page_reply(request("/web/app.js"))->headers, "ETag"));

  HttpRequest again = request("/web/mpegts.js");
  again.headers.emplace_back("if-none-match", etag);
  auto not_modified = http_page_reply(again);
  REQUIRE(not_modified);
  CHECK(not_modified->status == 304);
  CHECK(not_modified->body.empty());
  CHECK(header_value(not_modified->headers, "ETag") == etag);

  HttpRequest listed = request("/web/mpegts.js", "HEAD");
  listed.headers.emplace_back("if-none-match", "\"other\", W/" + etag);
  CHECK(http_page_reply(listed)->status == 304);

  HttpRequest stale = request("/web/mpegts.js");
  stale.headers.emplace_back("if-none-match", "\"0123456789abcdef\"");
  CHECK(http_page_reply(stale)->status == 200);
}

TEST_CASE("other methods: 405 with Allow") {
  for (const char* method : {"POST", "PUT", "DELETE", "OPTIONS"}) {
    auto r = http_page_reply(request("/", method));
    REQUIRE(r);
    CHECK(r->status == 405);
    CHECK(header_value(r->headers, "Allow") == "GET, HEAD");
  }
}
