// config/record_template.hpp: what record.path expands to, and which templates and expansions
// are refused (nothing may lead out of record.dir).
#include <doctest/doctest.h>

#include "config/record_template.hpp"

using namespace sluice::config;

namespace {
// 2026-12-02 07:12:41 UTC, a Wednesday.
constexpr int64_t kStart = 1796195561;
}  // namespace

TEST_CASE("the default template: app directory, stream and UTC start time") {
  const std::string tmpl = "{app}/{stream}-%Y%m%d-%H%M%S";
  CHECK(check_record_template(tmpl).empty());
  CHECK(expand_record_template(tmpl, {"live", "cam", 1, kStart}) == "live/cam-20261202-071241");
}

TEST_CASE("a stream's '/' becomes '_', {seq} counts files, dated directories") {
  const std::string tmpl = "%Y/%m/%d/{app}-{stream}-{seq}";
  CHECK(check_record_template(tmpl).empty());
  CHECK(expand_record_template(tmpl, {"show", "studio/a", 3, kStart}) == "2026/12/02/show-studio_a-3");
  CHECK(expand_record_template("{stream}-%F-%a-%%", {"x", "s", 1, kStart}) == "s-2026-12-02-Wed-%");
}

TEST_CASE("templates that could leave the directory or collide are refused") {
  CHECK_FALSE(check_record_template("").empty());
  CHECK_FALSE(check_record_template("/{stream}").empty());
  CHECK_FALSE(check_record_template("../{stream}").empty());
  CHECK_FALSE(check_record_template("a/./{stream}").empty());
  CHECK_FALSE(check_record_template("{stream}/").empty());
  CHECK_FALSE(check_record_template("a\\{stream}").empty());
  CHECK_FALSE(check_record_template("%D{stream}").empty());  // %D makes slashes
  CHECK_FALSE(check_record_template("{stream}%").empty());
  CHECK_FALSE(check_record_template("{app}-%Y").empty());  // no {stream}
  CHECK_FALSE(check_record_template("{stream}}").empty());
  CHECK_FALSE(check_record_template(std::string("{stream}\n")).empty());
}

TEST_CASE("expansions are checked again before a file is created") {
  CHECK(is_confined_relative_path("live/cam-1"));
  CHECK_FALSE(is_confined_relative_path("../cam"));
  CHECK_FALSE(is_confined_relative_path("live/../../etc/cam"));
  CHECK_FALSE(is_confined_relative_path("/etc/cam"));
  CHECK_FALSE(is_confined_relative_path("live//cam"));
  CHECK_FALSE(is_confined_relative_path(""));
  // An app named ".." (if one ever were allowed) cannot take {app}/... out of the directory.
  CHECK_FALSE(is_confined_relative_path(expand_record_template("{app}/{stream}", {"..", "cam", 1, kStart})));
}
