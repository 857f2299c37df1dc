// server/access/signature: vectors computed independently with
//   printf 'publish\nlive\ncam\n1767225600' | openssl dgst -sha256 -hmac 'test-secret-0123456789'
#include <doctest/doctest.h>

#include <string>

#include "server/access/signature.hpp"

using namespace sluice::server;

namespace {
constexpr const char* kSecret = "test-secret-0123456789";
constexpr const char* kVector = "93963d42a4ab7b12b9cb0c35ee244631858b2a59f80cf56c1b6cbd5790af43ae";
}  // namespace

TEST_CASE("url_signature is openssl's HMAC-SHA256 of the four lines") {
  CHECK(url_signature(kSecret, "publish", "live", "cam", 1767225600) == kVector);
  CHECK(url_signature("another-secret-abcdefgh", "play", "vod", "dir/clip.mp4", 2000000000) ==
        "30c2f7788fe6b21b19f945317e1b106d860d68beb92cbd13d231693c28aa4cf2");
}

TEST_CASE("check_url_signature") {
  const std::string q = std::string("expires=1767225600&sign=") + kVector;
  CHECK(check_url_signature(kSecret, "publish", "live", "cam", q, 1767225600, 0) == SignatureCheck::Valid);
  CHECK(check_url_signature(kSecret, "publish", "live", "cam", "x=1&" + q, 1767225000, 0) == SignatureCheck::Valid);
  // Upper-case hex is the same signature.
  std::string upper = q;
  for (size_t i = q.find("sign=") + 5; i < upper.size(); ++i) upper[i] = static_cast<char>(toupper(upper[i]));
  CHECK(check_url_signature(kSecret, "publish", "live", "cam", upper, 1767225600, 0) == SignatureCheck::Valid);
  // Expired, within and past the skew.
  CHECK(check_url_signature(kSecret, "publish", "live", "cam", q, 1767225610, 30) == SignatureCheck::Valid);
  CHECK(check_url_signature(kSecret, "publish", "live", "cam", q, 1767225601, 0) == SignatureCheck::Expired);
  // Each part is covered: action, app, stream, expiry, secret.
  CHECK(check_url_signature(kSecret, "play", "live", "cam", q, 0, 0) == SignatureCheck::Wrong);
  CHECK(check_url_signature(kSecret, "publish", "live2", "cam", q, 0, 0) == SignatureCheck::Wrong);
  CHECK(check_url_signature(kSecret, "publish", "live", "cam2", q, 0, 0) == SignatureCheck::Wrong);
  CHECK(check_url_signature("other-secret-0123456789", "publish", "live", "cam", q, 0, 0) == SignatureCheck::Wrong);
  CHECK(check_url_signature(kSecret, "publish", "live", "cam", std::string("expires=1767225601&sign=") + kVector, 0,
                            0) == SignatureCheck::Wrong);
  // An expired forgery is wrong, not expired (expiry is only told for genuine URLs).
  CHECK(check_url_signature(kSecret, "publish", "live", "cam2", q, 1767229999, 0) == SignatureCheck::Wrong);
  // Missing and malformed.
  CHECK(check_url_signature(kSecret, "publish", "live", "cam", "", 0, 0) == SignatureCheck::Missing);
  CHECK(check_url_signature(kSecret, "publish", "live", "cam", "key=x", 0, 0) == SignatureCheck::Missing);
  CHECK(check_url_signature(kSecret, "publish", "live", "cam", "expires=1", 0, 0) == SignatureCheck::Malformed);
  CHECK(check_url_signature(kSecret, "publish", "live", "cam", std::string("sign=") + kVector, 0, 0) ==
        SignatureCheck::Malformed);
  CHECK(check_url_signature(kSecret, "publish", "live", "cam", "expires=abc&sign=" + std::string(kVector), 0, 0) ==
        SignatureCheck::Malformed);
  CHECK(check_url_signature(kSecret, "publish", "live", "cam", "expires=-5&sign=" + std::string(kVector), 0, 0) ==
        SignatureCheck::Malformed);
  CHECK(check_url_signature(kSecret, "publish", "live", "cam", "expires=1767225600&sign=abc", 0, 0) ==
        SignatureCheck::Malformed);
  CHECK(check_url_signature(kSecret, "publish", "live", "cam",
                            "expires=99999999999999999999&sign=" + std::string(kVector), 0,
                            0) == SignatureCheck::Malformed);
}
