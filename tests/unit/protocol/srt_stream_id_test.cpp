// parse_srt_stream_id (protocol/srt_stream_id.hpp): the Access Control syntax, the short forms,
// and what is refused.
#include <doctest/doctest.h>

#include "protocol/srt_stream_id.hpp"

using namespace sluice;
using namespace sluice::protocol;

TEST_CASE("SRT stream ids: the Access Control syntax") {
  auto id = parse_srt_stream_id("#!::r=live/cam,m=publish,u=alice,s=abc123,t=stream,h=example.com");
  REQUIRE(id.ok());
  CHECK(id->mode == SrtStreamId::Mode::Publish);
  CHECK(id->app == "live");
  CHECK(id->name == "cam");
  CHECK(id->user == "alice");
  CHECK(id->session == "abc123");
  CHECK(id->query.empty());

  // Other keys are query parameters, after the resource's own; a nested name stays whole.
  id = parse_srt_stream_id("#!::m=request,r=live/studio/cam?key=k1,token=t2");
  REQUIRE(id.ok());
  CHECK(id->mode == SrtStreamId::Mode::Request);
  CHECK(id->name == "studio/cam");
  CHECK(id->query == "key=k1&token=t2");
  id = parse_srt_stream_id("#!::r=live/cam,key=k1");
  REQUIRE(id.ok());
  CHECK(id->query == "key=k1");
}

TEST_CASE("SRT stream ids: the short forms") {
  auto id = parse_srt_stream_id("publish:live/cam?key=k1");
  REQUIRE(id.ok());
  CHECK(id->mode == SrtStreamId::Mode::Publish);
  CHECK(id->app == "live");
  CHECK(id->name == "cam");
  CHECK(id->query == "key=k1");
  id = parse_srt_stream_id("read:live/cam");
  REQUIRE(id.ok());
  CHECK(id->mode == SrtStreamId::Mode::Request);
  id = parse_srt_stream_id("live/cam");
  REQUIRE(id.ok());
  CHECK(id->mode == SrtStreamId::Mode::Request);
  CHECK(id->name == "cam");
}

TEST_CASE("SRT stream ids: what is refused, and why") {
  auto why = [](std::string_view text) {
    auto id = parse_srt_stream_id(text);
    REQUIRE_FALSE(id.ok());
    return id.error().context;
  };
  CHECK(why("").find("no stream id") != std::string::npos);
  CHECK(why("#!::m=publish").find("no resource") != std::string::npos);
  CHECK(why("#!::r=live/cam,m=bidirectional").find("bidirectional") != std::string::npos);
  CHECK(why("#!::r=live/cam,t=file").find("stream only") != std::string::npos);
  CHECK(why("#!::r=live/cam,novalue").find("key=value") != std::string::npos);
  CHECK(why("publish:cam").find("APP/NAME") != std::string::npos);
  CHECK(why("live/").find("APP/NAME") != std::string::npos);
  CHECK(why("/cam").find("APP/NAME") != std::string::npos);
  CHECK(why(std::string(513, 'a')).find("512") != std::string::npos);
}
