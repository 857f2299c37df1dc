// server/access/policy: the decision without a round trip.
#include <doctest/doctest.h>

#include <vector>

#include "server/access/policy.hpp"
#include "server/access/signature.hpp"

using namespace sluice::server;
using sluice::config::AccessRules;
using sluice::config::parse_cidr;

namespace {
const std::vector<uint8_t> kLocal = {127, 0, 0, 1};
const std::vector<uint8_t> kTen = {10, 1, 2, 3};
const std::vector<uint8_t> kV6Local = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};

AccessVerdict check(const AccessRules& r, std::string_view stream, std::string_view query,
                    const std::vector<uint8_t>& peer = kLocal, int64_t now = 1000) {
  return check_access(r, AccessAction::Publish, "live", stream, query, peer, now);
}
}  // namespace

TEST_CASE("no rules: everyone") {
  AccessRules r;
  CHECK(check(r, "cam", "").allowed());
  CHECK(check(r, "cam", "key=whatever").allowed());
}

TEST_CASE("address rules: deny first, then allow, IPv4 and IPv6") {
  AccessRules r;
  r.allow = {*parse_cidr("10.0.0.0/8"), *parse_cidr("::1/128")};
  CHECK(check(r, "cam", "", kTen).allowed());
  CHECK(check(r, "cam", "", kV6Local).allowed());
  CHECK(check(r, "cam", "", kLocal).denial == Denial::Address);
  r.deny = {*parse_cidr("10.1.0.0/16")};
  AccessVerdict v = check(r, "cam", "", kTen);
  CHECK(v.denial == Denial::Address);
  CHECK(v.reason == "address denied");
}

TEST_CASE("keys: any of the list, or the stream's own; decoded once; key= or token=") {
  AccessRules r;
  r.keys = {"k-1", "k+2"};
  r.stream_keys = {{"solo", "k-solo"}};
  CHECK(check(r, "cam", "key=k-1").allowed());
  CHECK(check(r, "cam", "token=k-1").allowed());
  CHECK(check(r, "cam", "key=k%2B2").allowed());
  CHECK(check(r, "cam", "key=k+2").denial == Denial::KeyWrong);  // '+' is a space
  CHECK(check(r, "solo", "key=k-solo").allowed());
  CHECK(check(r, "cam", "key=k-solo").denial == Denial::KeyWrong);
  CHECK(check(r, "cam", "").denial == Denial::KeyMissing);
  CHECK(check(r, "cam", "key=").denial == Denial::KeyWrong);
  CHECK(check(r, "cam", "key=K-1").denial == Denial::KeyWrong);
}

TEST_CASE("signed URLs, alone or beside keys") {
  AccessRules r;
  r.signed_url.secret.value = "secret-0123456789abcdef";
  std::string good = "expires=2000&sign=" + url_signature("secret-0123456789abcdef", "publish", "live", "cam", 2000);
  CHECK(check(r, "cam", good).allowed());
  CHECK(check(r, "cam", good, kLocal, 2031).reason == "signed URL expired");
  CHECK(check(r, "cam2", good).reason == "wrong signature");
  CHECK(check(r, "cam", "").denial == Denial::KeyMissing);
  CHECK(check(r, "cam", "key=x").denial == Denial::KeyWrong);  // no keys here: a signature is needed
  // Play and publish sign differently.
  CHECK_FALSE(check_access(r, AccessAction::Play, "live", "cam", good, kLocal, 1000).allowed());
  r.keys = {"k"};
  CHECK(check(r, "cam", "key=k").allowed());
  CHECK(check(r, "cam", good).allowed());
  CHECK(check(r, "cam", "").reason == "a key or a signed URL is required");
}
