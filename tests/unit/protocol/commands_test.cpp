// The RTMP command parsers: play's reset argument, a boolean from Flash or a number from old
// clients, whatever number a peer sends (fuzz corpus commands/play-reset-out-of-range found a
// double outside int's range cast to int).
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "protocol/commands.hpp"

using namespace sluice::protocol;
namespace amf = sluice::protocol::amf;

namespace {

Command play_with_reset(amf::Value reset) {
  Command c;
  c.name = "play";
  c.transaction_id = 4;
  c.args = {amf::Value::string("cam"), amf::Value::number(-2000), amf::Value::number(-1), std::move(reset)};
  return c;
}

bool reset_of(amf::Value reset) {
  auto p = parse_play(play_with_reset(std::move(reset)));
  REQUIRE(p);
  return p->reset;
}

}  // namespace

TEST_CASE("play's reset: a boolean, an old client's number, and any other number without undefined behaviour") {
  CHECK(reset_of(amf::Value::boolean(true)));
  CHECK_FALSE(reset_of(amf::Value::boolean(false)));
  CHECK_FALSE(reset_of(amf::Value::number(0)));
  CHECK(reset_of(amf::Value::number(1)));
  CHECK_FALSE(reset_of(amf::Value::number(2)));
  CHECK(reset_of(amf::Value::number(3)));
  CHECK_FALSE(reset_of(amf::Value::number(2.16159e233)));
  CHECK_FALSE(reset_of(amf::Value::number(-1e300)));
  CHECK_FALSE(reset_of(amf::Value::number(std::numeric_limits<double>::infinity())));
  CHECK_FALSE(reset_of(amf::Value::number(std::nan(""))));
  // Absent: Flash's default.
  Command c = play_with_reset(amf::Value::boolean(true));
  c.args.pop_back();
  auto p = parse_play(c);
  REQUIRE(p);
  CHECK(p->reset);
}
