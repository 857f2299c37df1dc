// judge_srt_caller (server/srt/srt_handshake.hpp): what an SRT caller's handshake is refused for,
// and with which reject reason, before any loop sees it.
#include "server/srt/srt_handshake.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <vector>

using namespace sluice;
using namespace sluice::server;

namespace {

const std::vector<uint8_t> kPeer{127, 0, 0, 1};

config::Config make_config() {
  config::Config c;
  config::AppConfig live;
  live.name = "live";
  live.type = config::AppType::Live;
  c.apps.push_back(live);
  config::AppConfig keyed;
  keyed.name = "keyed";
  keyed.type = config::AppType::Live;
  keyed.publish.keys = {"k1"};
  keyed.srt.latency = std::chrono::milliseconds(400);
  keyed.srt.passphrase.value = "app-secret-123";
  c.apps.push_back(keyed);
  config::AppConfig vod;
  vod.name = "vod";
  vod.type = config::AppType::Vod;
  c.apps.push_back(vod);
  return c;
}

}  // namespace

TEST_CASE("an SRT caller of a live app is accepted, with the server's settings") {
  const config::Config c = make_config();
  SrtVerdict v = judge_srt_caller(c, "#!::r=live/cam,m=publish", kPeer, 0);
  CHECK(v.reject == 0);
  CHECK(v.app == c.find_app("live"));
  CHECK(v.id.mode == protocol::SrtStreamId::Mode::Publish);
  CHECK(v.id.name == "cam");
  CHECK_FALSE(v.latency.has_value());
  CHECK(v.passphrase == nullptr);
  CHECK(judge_srt_caller(c, "read:live/cam", kPeer, 0).reject == 0);
  CHECK(judge_srt_caller(c, "live/cam", kPeer, 0).id.mode == protocol::SrtStreamId::Mode::Request);
}

TEST_CASE("the stream id's form, the app and the name are refused with their reasons") {
  const config::Config c = make_config();
  CHECK(judge_srt_caller(c, "", kPeer, 0).reject == kSrtRejectBadRequest);
  CHECK(judge_srt_caller(c, "#!::m=publish", kPeer, 0).reject == kSrtRejectBadRequest);
  CHECK(judge_srt_caller(c, "#!::r=live/cam,m=bidirectional", kPeer, 0).reject == kSrtRejectBadRequest);
  SrtVerdict none = judge_srt_caller(c, "publish:nope/cam", kPeer, 0);
  CHECK(none.reject == kSrtRejectNotFound);
  CHECK(none.reason == "no app 'nope'");
  CHECK(judge_srt_caller(c, "publish:vod/cam", kPeer, 0).reject == kSrtRejectNotFound);
  CHECK(judge_srt_caller(c, "publish:live/a/../b", kPeer, 0).reject == kSrtRejectBadRequest);
}

TEST_CASE("an app's key rules decide in the handshake, and its SRT settings come with the verdict") {
  const config::Config c = make_config();
  SrtVerdict missing = judge_srt_caller(c, "publish:keyed/cam", kPeer, 0);
  CHECK(missing.reject == kSrtRejectUnauthorized);
  SrtVerdict wrong = judge_srt_caller(c, "#!::r=keyed/cam,m=publish,key=nope", kPeer, 0);
  CHECK(wrong.reject == kSrtRejectForbidden);
  CHECK_FALSE(wrong.reason.empty());
  SrtVerdict right = judge_srt_caller(c, "#!::r=keyed/cam,m=publish,key=k1", kPeer, 0);
  CHECK(right.reject == 0);
  REQUIRE(right.latency.has_value());
  CHECK(right.latency->count() == 400);
  REQUIRE(right.passphrase != nullptr);
  CHECK(*right.passphrase == "app-secret-123");
  // The keys are the publishers'; a reader of the same app needs none.
  CHECK(judge_srt_caller(c, "read:keyed/cam", kPeer, 0).reject == 0);
}
