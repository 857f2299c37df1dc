// server/access/: the one query parser and token check that RTMP publish and HTTP upload use.
#include <doctest/doctest.h>

#include <string>

#include "server/access/query.hpp"
#include "server/access/token.hpp"

using namespace sluice::server;

TEST_CASE("query parameters are percent-decoded once, '+' is a space") {
  CHECK(query_param("a=1&token=abc%2B&x", "token") == "abc+");
  CHECK(query_param("a=1&x", "x") == "");
  CHECK_FALSE(query_param("a=1", "token").has_value());
  CHECK(query_param("token=a+b", "token") == "a b");
  // Once: "%2541" is "%41", not "A".
  CHECK(query_param("token=%2541", "token") == "%41");
  CHECK_FALSE(query_param("token=%zz", "token").has_value());
  CHECK(query_param("token=first&token=second", "token") == "first");
  // Keys match whole: "xtoken" is not "token".
  CHECK_FALSE(query_param("xtoken=1", "token").has_value());
  CHECK(query_param("", "token") == std::nullopt);
}

TEST_CASE("percent_decode") {
  std::string out;
  CHECK(percent_decode("a%20b%2F%2e", out));
  CHECK(out == "a b/.");
  CHECK_FALSE(percent_decode("bad%2", out));
  CHECK_FALSE(percent_decode("%g0", out));
}

TEST_CASE("token_equal compares whole strings") {
  CHECK(token_equal("secret", "secret"));
  CHECK_FALSE(token_equal("secret", "secreT"));
  CHECK_FALSE(token_equal("secret", "secret2"));
  CHECK_FALSE(token_equal("secre", "secret"));
  CHECK_FALSE(token_equal("", "secret"));
  CHECK(token_equal("", ""));
  // A NUL byte is a byte like any other (no C-string truncation).
  CHECK_FALSE(token_equal(std::string("sec\0x", 5), std::string("sec\0y", 5)));
}

TEST_CASE("query_token_matches: the publish and upload rule") {
  CHECK(query_token_matches("", "token", ""));  // no token configured: nothing required
  CHECK(query_token_matches("token=s3cret", "token", "s3cret"));
  CHECK(query_token_matches("a=1&token=s%33cret", "token", "s3cret"));  // decoded like any value
  CHECK_FALSE(query_token_matches("", "token", "s3cret"));
  CHECK_FALSE(query_token_matches("token=", "token", "s3cret"));
  CHECK_FALSE(query_token_matches("token=s3cre", "token", "s3cret"));
  CHECK_FALSE(query_token_matches("key=s3cret", "token", "s3cret"));
  CHECK_FALSE(query_token_matches("token=%zz", "token", "s3cret"));
}
