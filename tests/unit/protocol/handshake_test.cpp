// Tests for protocol/handshake.{hpp,cpp} and protocol/handshake_digest.{hpp,cpp}.
//
// The hex constants were computed independently with Python's hmac/hashlib from the formulas in
// docs/protocol.md, "Digest handshake" (a one-off script, not kept in the tree), so they do not
// share any code or assumptions with the implementation beyond the document.
#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
#include <initializer_list>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/handshake.hpp"
#include "protocol/handshake_digest.hpp"

using namespace sluice;
using namespace sluice::protocol;

namespace {

constexpr size_t kC0C1Size = 1 + kHandshakeSize;
constexpr size_t kS0S1S2Size = 1 + 2 * kHandshakeSize;
// Bytes a peer sends right after its handshake: they belong to the chunk stream and must be
// left unconsumed (a Set Chunk Size header, as it happens).
const std::vector<uint8_t> kChunkStreamBytes = {0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x01};

std::vector<uint8_t> from_hex(std::string_view hex) {
  std::vector<uint8_t> out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2)
    out.push_back(static_cast<uint8_t>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  return out;
}

std::vector<uint8_t> to_vector(std::span<const uint8_t> bytes) { return {bytes.begin(), bytes.end()}; }

// A deterministic "random" source the Python script reproduces: a 32-bit LCG whose top byte
// is emitted after each step.
std::function<void(uint8_t*, size_t)> lcg_random(uint32_t seed) {
  return [state = seed](uint8_t* data, size_t size) mutable {
    for (size_t i = 0; i < size; ++i) {
      state = state * 1664525u + 1013904223u;
      data[i] = static_cast<uint8_t>(state >> 24);
    }
  };
}

HandshakeOptions client_options(bool digest) {
  HandshakeOptions options;
  options.client_digest = digest;
  options.random = lcg_random(1);
  options.time_ms = 1000;
  return options;
}

HandshakeOptions server_options() {
  HandshakeOptions options;
  options.random = lcg_random(2);
  options.time_ms = 2000;
  return options;
}

// The fixed C1 of the Python vectors: time 0x01020304, version 9.0.124.2, then (i*37+11) & 0xff.
std::vector<uint8_t> fixed_c1() {
  std::vector<uint8_t> c1(kHandshakeSize);
  const uint8_t header[8] = {1, 2, 3, 4, 9, 0, 124, 2};
  std::copy(std::begin(header), std::end(header), c1.begin());
  for (size_t i = 8; i < kHandshakeSize; ++i) c1[i] = static_cast<uint8_t>(i * 37 + 11);
  return c1;
}

HandshakePacket packet(const std::vector<uint8_t>& bytes, size_t offset = 0) {
  return HandshakePacket(bytes.data() + offset, kHandshakeSize);
}

// Chooses the size of the next read, like a socket would.
using Splitter = std::function<size_t()>;

Splitter all_at_once() {
  return [] { return SIZE_MAX; };
}
Splitter one_byte() {
  return [] { return size_t{1}; };
}
Splitter random_split(uint32_t seed) {
  return [rng = std::mt19937(seed)]() mutable { return std::uniform_int_distribution<size_t>(1, 700)(rng); };
}

// Feeds `in` in pieces and returns how many bytes the handshake consumed in total. Stops when
// a piece is only partly consumed (the handshake ended inside it) or on the first error.
Result<size_t> feed_split(Handshake& hs, std::span<const uint8_t> in, const Splitter& next) {
  size_t pos = 0;
  while (pos < in.size()) {
    const size_t n = std::min(next(), in.size() - pos);
    auto used = hs.feed(in.subspan(pos, n));
    if (!used) return used;
    pos += *used;
    if (*used < n) break;
  }
  return pos;
}

std::vector<uint8_t> concat(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  std::vector<uint8_t> out = a;
  out.insert(out.end(), b.begin(), b.end());
  return out;
}

struct Transcript {
  std::vector<uint8_t> c0c1, s0s1s2, c2;
  HandshakeScheme client_scheme = HandshakeScheme::Simple;
  HandshakeScheme server_scheme = HandshakeScheme::Simple;

  bool operator==(const Transcript&) const = default;
};

// Runs a client and a server back to back through memory. Each side also receives chunk
// stream bytes after the peer's last handshake packet, which it must not consume.
Transcript run_exchange(bool client_digest, const Splitter& split) {
  Transcript t;
  Handshake client(HandshakeRole::Client, client_options(client_digest));
  Handshake server(HandshakeRole::Server, server_options());

  client.drain_output(t.c0c1);
  REQUIRE(t.c0c1.size() == kC0C1Size);
  auto used = feed_split(server, t.c0c1, split);
  REQUIRE(used.ok());
  CHECK(*used == kC0C1Size);
  server.drain_output(t.s0s1s2);
  REQUIRE(t.s0s1s2.size() == kS0S1S2Size);
  CHECK_FALSE(server.done());

  used = feed_split(client, concat(t.s0s1s2, kChunkStreamBytes), split);
  REQUIRE(used.ok());
  CHECK(*used == kS0S1S2Size);
  CHECK(client.done());
  client.drain_output(t.c2);
  REQUIRE(t.c2.size() == kHandshakeSize);

  used = feed_split(server, concat(t.c2, kChunkStreamBytes), split);
  REQUIRE(used.ok());
  CHECK(*used == kHandshakeSize);
  CHECK(server.done());
  CHECK_FALSE(server.has_output());
  CHECK(client.peer_version() == 3);
  CHECK(server.peer_version() == 3);
  t.client_scheme = client.scheme();
  t.server_scheme = server.scheme();
  return t;
}

// Feeds one chunk of bytes that must make the handshake fail with `code`.
void check_fails_with(Handshake& hs, std::span<const uint8_t> in, Errc code) {
  auto used = hs.feed(in);
  REQUIRE_FALSE(used.ok());
  CHECK(used.error().code == code);
  CHECK(hs.failed());
  CHECK_FALSE(hs.done());
  // The failure sticks: later calls return the same error and consume nothing.
  const uint8_t more[4] = {3, 0, 0, 0};
  auto again = hs.feed(more);
  REQUIRE_FALSE(again.ok());
  CHECK(again.error().code == code);
  CHECK(again.error().context == used.error().context);
}

// The S0+S1+S2 a server sends to a digest client, for tests that tamper with it.
std::vector<uint8_t> digest_server_reply(Handshake& client) {
  std::vector<uint8_t> c0c1, reply;
  client.drain_output(c0c1);
  Handshake server(HandshakeRole::Server, server_options());
  REQUIRE(server.feed(c0c1).ok());
  server.drain_output(reply);
  REQUIRE(reply.size() == kS0S1S2Size);
  return reply;
}

}  // namespace

TEST_CASE("hmac_sha256 matches RFC 4231 test case 2") {
  const std::string_view key = "Jefe";
  const std::string_view data = "what do ya want for nothing?";
  auto mac = hmac_sha256({reinterpret_cast<const uint8_t*>(key.data()), key.size()},
                         {reinterpret_cast<const uint8_t*>(data.data()), data.size()});
  CHECK(to_vector(mac) == from_hex("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"));
}

TEST_CASE("Adobe keys have the documented sizes and prefixes") {
  CHECK(fp_partial_key().size() == 30);
  CHECK(fp_full_key().size() == 62);
  CHECK(fms_partial_key().size() == 36);
  CHECK(fms_full_key().size() == 68);
  auto text = [](std::span<const uint8_t> k) { return std::string(k.begin(), k.end()); };
  CHECK(text(fp_partial_key()) == "Genuine Adobe Flash Player 001");
  CHECK(text(fms_partial_key()) == "Genuine Adobe Flash Media Server 001");
  const auto k32 = from_hex("f0eec24a8068bee82e00d0d1029e7e576eec5d2d29806fab93b8e636cfeb31ae");
  CHECK(to_vector(fp_full_key().subspan(30)) == k32);
  CHECK(to_vector(fms_full_key().subspan(36)) == k32);
}

TEST_CASE("digest offset and digest of a fixed C1 in both layouts") {
  const auto c1 = fixed_c1();
  CHECK(digest_offset(packet(c1), kDigestBaseDigestFirst) == 438);
  CHECK(digest_offset(packet(c1), kDigestBaseKeyFirst) == 1378);
  CHECK(to_vector(compute_packet_digest(packet(c1), kDigestBaseDigestFirst, fp_partial_key())) ==
        from_hex("3b1a9b7c4a8a41736d850b8e9ce8a3fbc3c54b40dc2578106dae1c99bec59075"));
  CHECK(to_vector(compute_packet_digest(packet(c1), kDigestBaseKeyFirst, fp_partial_key())) ==
        from_hex("011e50559481fd433c8dbcd31b8df4d84abcfa2a74b32688b777e3f4f13f970f"));
  CHECK(to_vector(compute_packet_digest(packet(c1), kDigestBaseKeyFirst, fms_partial_key())) ==
        from_hex("2ac45b949f3ea655e155892ffb9769db038627ee123dd567ddbd651c2abd68c5"));
  // Unsigned, the packet verifies in neither layout.
  CHECK_FALSE(find_digest_base(packet(c1), fp_partial_key()).has_value());

  SUBCASE("signing at base 8 stores the digest at its offset") {
    auto signed_c1 = c1;
    sign_packet(MutableHandshakePacket(signed_c1.data(), kHandshakeSize), kDigestBaseDigestFirst, fp_partial_key());
    CHECK(std::vector<uint8_t>(signed_c1.begin() + 438, signed_c1.begin() + 470) ==
          from_hex("3b1a9b7c4a8a41736d850b8e9ce8a3fbc3c54b40dc2578106dae1c99bec59075"));
    CHECK(verify_packet_digest(packet(signed_c1), kDigestBaseDigestFirst, fp_partial_key()));
    CHECK_FALSE(verify_packet_digest(packet(signed_c1), kDigestBaseDigestFirst, fms_partial_key()));
    CHECK(find_digest_base(packet(signed_c1), fp_partial_key()) == kDigestBaseDigestFirst);
    CHECK(to_vector(read_packet_digest(packet(signed_c1), kDigestBaseDigestFirst)) ==
          from_hex("3b1a9b7c4a8a41736d850b8e9ce8a3fbc3c54b40dc2578106dae1c99bec59075"));
  }
  SUBCASE("signing at base 772 stores the digest at its offset") {
    auto signed_c1 = c1;
    sign_packet(MutableHandshakePacket(signed_c1.data(), kHandshakeSize), kDigestBaseKeyFirst, fp_partial_key());
    CHECK(std::vector<uint8_t>(signed_c1.begin() + 1378, signed_c1.begin() + 1410) ==
          from_hex("011e50559481fd433c8dbcd31b8df4d84abcfa2a74b32688b777e3f4f13f970f"));
    CHECK(find_digest_base(packet(signed_c1), fp_partial_key()) == kDigestBaseKeyFirst);
    signed_c1[100] ^= 0x01;
    CHECK_FALSE(find_digest_base(packet(signed_c1), fp_partial_key()).has_value());
  }
}

TEST_CASE("digest offsets wrap modulo 728 and stay inside the digest block") {
  auto c1 = fixed_c1();
  // Offset fields whose byte sums exceed 728 (4 x 0xFF = 1020, 1020 % 728 = 292).
  std::fill(c1.begin() + 8, c1.begin() + 12, 0xFF);
  std::fill(c1.begin() + 772, c1.begin() + 776, 0xFF);
  CHECK(digest_offset(packet(c1), kDigestBaseDigestFirst) == 304);
  CHECK(digest_offset(packet(c1), kDigestBaseKeyFirst) == 1068);
  CHECK(to_vector(compute_packet_digest(packet(c1), kDigestBaseDigestFirst, fp_partial_key())) ==
        from_hex("7132fe07dfe5c1a04d5e760daa47d3841c043e47a92c8f4ed269f2d588116f77"));
  CHECK(to_vector(compute_packet_digest(packet(c1), kDigestBaseKeyFirst, fp_partial_key())) ==
        from_hex("542fcb23f952f3da972f6a6e373bef42842b0d1a7a7a9c03a177bff07060d626"));
  // The extremes: a sum of exactly 728 gives the first position, 727 the last (1503 + 32 = 1535).
  std::fill(c1.begin() + 8, c1.begin() + 12, 182);
  const uint8_t sum_727[4] = {181, 182, 182, 182};
  std::copy(std::begin(sum_727), std::end(sum_727), c1.begin() + 772);
  CHECK(digest_offset(packet(c1), kDigestBaseDigestFirst) == 12);
  CHECK(digest_offset(packet(c1), kDigestBaseKeyFirst) == 1503);
}

TEST_CASE("C2/S2 signatures for a known peer digest") {
  HandshakeDigest peer{};
  for (size_t i = 0; i < peer.size(); ++i) peer[i] = static_cast<uint8_t>(i);
  std::vector<uint8_t> s2(kHandshakeSize);
  for (size_t i = 0; i < s2.size(); ++i) s2[i] = static_cast<uint8_t>(i * 13 + 5);

  const auto s2_sig = from_hex("4a62d85cc6c19e2b78b152f930477af1aed4e8c38ed0f04ba1ae7c73d4b13677");
  const auto c2_sig = from_hex("f4ead7f8ddbd9798f57346d892e7eec888aa1a10efa81b40cebcea1f6f0e0203");
  CHECK(to_vector(response_signature(packet(s2), fms_full_key(), peer)) == s2_sig);
  CHECK(to_vector(response_signature(packet(s2), fp_full_key(), peer)) == c2_sig);

  CHECK_FALSE(verify_response(packet(s2), fms_full_key(), peer));
  sign_response(MutableHandshakePacket(s2.data(), kHandshakeSize), fms_full_key(), peer);
  CHECK(std::vector<uint8_t>(s2.begin() + kSignedPayloadSize, s2.end()) == s2_sig);
  CHECK(verify_response(packet(s2), fms_full_key(), peer));
  CHECK_FALSE(verify_response(packet(s2), fp_full_key(), peer));
  peer[0] ^= 0x80;
  CHECK_FALSE(verify_response(packet(s2), fms_full_key(), peer));
}

TEST_CASE("a digest exchange is byte exact") {
  // Each digest covers every other byte of its packet, so matching the digests and their
  // offsets proves the whole exchange matches the Python reconstruction byte for byte.
  const Transcript t = run_exchange(true, all_at_once());
  CHECK(t.client_scheme == HandshakeScheme::Digest);
  CHECK(t.server_scheme == HandshakeScheme::Digest);

  CHECK(t.c0c1[0] == 3);
  CHECK(std::vector<uint8_t>(t.c0c1.begin() + 1, t.c0c1.begin() + 9) ==
        std::vector<uint8_t>{0x00, 0x00, 0x03, 0xE8, 9, 0, 124, 2});
  const auto c1 = packet(t.c0c1, 1);
  CHECK(digest_offset(c1, kDigestBaseDigestFirst) == 475);
  CHECK(to_vector(read_packet_digest(c1, kDigestBaseDigestFirst)) ==
        from_hex("183d4709ad78d8e42d6620fcb181d63820890ad0165569a074492ebc0c2b3e62"));

  CHECK(t.s0s1s2[0] == 3);
  CHECK(std::vector<uint8_t>(t.s0s1s2.begin() + 1, t.s0s1s2.begin() + 9) ==
        std::vector<uint8_t>{0x00, 0x00, 0x07, 0xD0, 0x0D, 0x0E, 0x0A, 0x0D});
  const auto s1 = packet(t.s0s1s2, 1);
  CHECK(digest_offset(s1, kDigestBaseDigestFirst) == 426);
  CHECK(to_vector(read_packet_digest(s1, kDigestBaseDigestFirst)) ==
        from_hex("58d371134938175c16938a2fc3178ce33c575b6035f6c39f23d9d1a433700928"));
  CHECK(to_vector(packet(t.s0s1s2, 1 + kHandshakeSize).last<kDigestSize>()) ==
        from_hex("d8c3f121f95f12316ddfe1c29a3f905623362e53283d38f20426d7be4e6723d6"));

  CHECK(to_vector(packet(t.c2).last<kDigestSize>()) ==
        from_hex("25589948b6c764fab8709bc6762c67301c775fe21ff87cc5d76c3e7024cb644b"));
}

TEST_CASE("back to back with a plain (librtmp/OBS style) client") {
  const Transcript t = run_exchange(false, all_at_once());
  CHECK(t.client_scheme == HandshakeScheme::Simple);
  CHECK(t.server_scheme == HandshakeScheme::Simple);
  const std::vector<uint8_t> c1(t.c0c1.begin() + 1, t.c0c1.end());
  const std::vector<uint8_t> s1(t.s0s1s2.begin() + 1, t.s0s1s2.begin() + 1 + kHandshakeSize);
  const std::vector<uint8_t> s2(t.s0s1s2.begin() + 1 + kHandshakeSize, t.s0s1s2.end());
  CHECK(std::all_of(c1.begin() + 4, c1.begin() + 8, [](uint8_t b) { return b == 0; }));
  // S1: our time, zero version bytes (so that no client tries to verify it), random fill.
  CHECK(std::vector<uint8_t>(s1.begin(), s1.begin() + 8) == std::vector<uint8_t>{0, 0, 0x07, 0xD0, 0, 0, 0, 0});
  CHECK(s2 == c1);
  CHECK(t.c2 == s1);
}

TEST_CASE("byte-at-a-time and random splits give identical output") {
  for (bool digest : {true, false}) {
    CAPTURE(digest);
    const Transcript reference = run_exchange(digest, all_at_once());
    CHECK(run_exchange(digest, one_byte()) == reference);
    for (uint32_t seed = 1; seed <= 8; ++seed) {
      CAPTURE(seed);
      CHECK(run_exchange(digest, random_split(seed)) == reference);
    }
  }
}

TEST_CASE("server rejects C0 versions other than 3") {
  for (uint8_t version : std::initializer_list<uint8_t>{6, 8, 9}) {
    CAPTURE(version);
    Handshake server(HandshakeRole::Server, server_options());
    const uint8_t c0[2] = {version, 0};
    check_fails_with(server, c0, Errc::BadVersion);
    CHECK(server.peer_version() == version);
    CHECK(server.feed(c0).error().context.find("RTMPE not supported") != std::string::npos);
    CHECK_FALSE(server.has_output());
  }
  for (uint8_t version : std::initializer_list<uint8_t>{0, 1, 2, 4, 0x16, 'G', 0xFF}) {
    CAPTURE(version);
    Handshake server(HandshakeRole::Server, server_options());
    const uint8_t c0[1] = {version};
    check_fails_with(server, c0, Errc::BadVersion);
    CHECK_FALSE(server.has_output());
  }
}

TEST_CASE("client rejects S0 versions other than 3") {
  Handshake client(HandshakeRole::Client, client_options(true));
  std::vector<uint8_t> c0c1;
  client.drain_output(c0c1);
  const uint8_t s0[1] = {6};
  check_fails_with(client, s0, Errc::BadVersion);
  CHECK(client.peer_version() == 6);
  CHECK_FALSE(client.has_output());
}

TEST_CASE("short reads wait for more data without output") {
  Handshake client(HandshakeRole::Client, client_options(true));
  Handshake server(HandshakeRole::Server, server_options());
  std::vector<uint8_t> c0c1, s0s1s2, c2;
  client.drain_output(c0c1);
  CHECK_FALSE(client.has_output());

  SUBCASE("server before the end of C1") {
    auto used = server.feed(std::span(c0c1).first(kC0C1Size - 1));
    REQUIRE(used.ok());
    CHECK(*used == kC0C1Size - 1);
    CHECK_FALSE(server.has_output());
    CHECK(server.feed(std::span(c0c1).last(1)).value() == 1);
    server.drain_output(s0s1s2);
    CHECK(s0s1s2.size() == kS0S1S2Size);
  }
  SUBCASE("client before the end of S2, server before the end of C2") {
    REQUIRE(server.feed(c0c1).ok());
    server.drain_output(s0s1s2);
    CHECK(client.feed(std::span(s0s1s2).first(kS0S1S2Size - 1)).value() == kS0S1S2Size - 1);
    CHECK_FALSE(client.has_output());
    CHECK_FALSE(client.done());
    CHECK(client.feed(std::span(s0s1s2).last(1)).value() == 1);
    CHECK(client.done());
    client.drain_output(c2);
    REQUIRE(c2.size() == kHandshakeSize);

    CHECK(server.feed(std::span(c2).first(kHandshakeSize - 1)).value() == kHandshakeSize - 1);
    CHECK_FALSE(server.done());
    CHECK(server.feed(std::span(c2).last(1)).value() == 1);
    CHECK(server.done());
  }
  SUBCASE("empty input and input after the end consume nothing") {
    CHECK(server.feed({}).value() == 0);
    CHECK(server.peer_version() == 0);
    REQUIRE(server.feed(c0c1).ok());
    server.drain_output(s0s1s2);
    REQUIRE(client.feed(s0s1s2).ok());
    client.drain_output(c2);
    REQUIRE(server.feed(c2).ok());
    REQUIRE(server.done());
    CHECK(server.feed(kChunkStreamBytes).value() == 0);
    CHECK(client.feed(kChunkStreamBytes).value() == 0);
  }
}

TEST_CASE("client rejects a corrupted S1 digest") {
  Handshake client(HandshakeRole::Client, client_options(true));
  auto reply = digest_server_reply(client);
  const size_t pos = 1 + digest_offset(packet(reply, 1), kDigestBaseDigestFirst);
  reply[pos] ^= 0xFF;
  check_fails_with(client, reply, Errc::BadDigest);
  CHECK_FALSE(client.has_output());
}

TEST_CASE("client rejects a corrupted S2 signature") {
  for (size_t s2_byte : {size_t{0}, size_t{1000}, kHandshakeSize - 1}) {
    CAPTURE(s2_byte);
    Handshake client(HandshakeRole::Client, client_options(true));
    auto reply = digest_server_reply(client);
    reply[1 + kHandshakeSize + s2_byte] ^= 0x01;
    check_fails_with(client, reply, Errc::BadDigest);
    CHECK_FALSE(client.has_output());
  }
}

TEST_CASE("server answers a versioned C1 with a garbage digest with the simple scheme") {
  Handshake server(HandshakeRole::Server, server_options());
  const auto c1 = fixed_c1();  // Version 9.0.124.2, but not signed in either layout.
  std::vector<uint8_t> in = {3};
  in.insert(in.end(), c1.begin(), c1.end());
  REQUIRE(server.feed(in).value() == kC0C1Size);
  CHECK(server.scheme() == HandshakeScheme::Simple);
  std::vector<uint8_t> reply;
  server.drain_output(reply);
  REQUIRE(reply.size() == kS0S1S2Size);
  CHECK(std::all_of(reply.begin() + 5, reply.begin() + 9, [](uint8_t b) { return b == 0; }));
  CHECK(std::vector<uint8_t>(reply.begin() + 1 + kHandshakeSize, reply.end()) == c1);

  // A digest client (FFmpeg) accepts the zero-version S1 unverified and echoes it.
  Handshake client(HandshakeRole::Client, client_options(true));
  REQUIRE(client.feed(reply).value() == kS0S1S2Size);
  CHECK(client.done());
  CHECK(client.scheme() == HandshakeScheme::Simple);
  std::vector<uint8_t> c0c1;
  client.drain_output(c0c1);
  CHECK(c0c1.size() == kC0C1Size + kHandshakeSize);  // Nothing was drained before: C0+C1, then C2.
  CHECK(std::vector<uint8_t>(c0c1.begin() + kC0C1Size, c0c1.end()) ==
        std::vector<uint8_t>(reply.begin() + 1, reply.begin() + 1 + kHandshakeSize));
}

TEST_CASE("server answers a zero-version C1 with the simple scheme even if it carries a digest") {
  // Zero version bytes mean "simple" (docs/protocol.md, "Digest handshake", server step 1); the
  // digest is not looked at.
  auto c1 = fixed_c1();
  std::fill(c1.begin() + 4, c1.begin() + 8, 0);
  sign_packet(MutableHandshakePacket(c1.data(), kHandshakeSize), kDigestBaseDigestFirst, fp_partial_key());
  Handshake server(HandshakeRole::Server, server_options());
  std::vector<uint8_t> in = {3};
  in.insert(in.end(), c1.begin(), c1.end());
  REQUIRE(server.feed(in).ok());
  CHECK(server.scheme() == HandshakeScheme::Simple);
  std::vector<uint8_t> reply;
  server.drain_output(reply);
  REQUIRE(reply.size() == kS0S1S2Size);
  CHECK(std::vector<uint8_t>(reply.begin() + 1 + kHandshakeSize, reply.end()) == c1);
}

TEST_CASE("server mirrors a layout A (base 772) C1") {
  auto c1 = fixed_c1();
  sign_packet(MutableHandshakePacket(c1.data(), kHandshakeSize), kDigestBaseKeyFirst, fp_partial_key());
  Handshake server(HandshakeRole::Server, server_options());
  std::vector<uint8_t> in = {3};
  in.insert(in.end(), c1.begin(), c1.end());
  REQUIRE(server.feed(in).ok());
  CHECK(server.scheme() == HandshakeScheme::Digest);
  std::vector<uint8_t> reply;
  server.drain_output(reply);
  REQUIRE(reply.size() == kS0S1S2Size);
  CHECK(find_digest_base(packet(reply, 1), fms_partial_key()) == kDigestBaseKeyFirst);
  CHECK(verify_response(packet(reply, 1 + kHandshakeSize), fms_full_key(),
                        read_packet_digest(packet(c1), kDigestBaseKeyFirst)));
}

TEST_CASE("a plain client echoes a digest S1 without verifying it") {
  Handshake digest_client(HandshakeRole::Client, client_options(true));
  auto reply = digest_server_reply(digest_client);
  reply[1 + kHandshakeSize] ^= 0x01;  // Even a broken S2 is not the plain client's business.
  Handshake client(HandshakeRole::Client, client_options(false));
  REQUIRE(client.feed(reply).value() == kS0S1S2Size);
  CHECK(client.done());
  CHECK(client.scheme() == HandshakeScheme::Simple);
  std::vector<uint8_t> out;
  client.drain_output(out);
  CHECK(std::vector<uint8_t>(out.begin() + kC0C1Size, out.end()) ==
        std::vector<uint8_t>(reply.begin() + 1, reply.begin() + 1 + kHandshakeSize));
}

TEST_CASE("the default random source works and differs between handshakes") {
  Handshake a(HandshakeRole::Client);
  Handshake b(HandshakeRole::Client);
  std::vector<uint8_t> ca, cb;
  a.drain_output(ca);
  b.drain_output(cb);
  REQUIRE(ca.size() == kC0C1Size);
  CHECK(ca != cb);
  CHECK(find_digest_base(packet(ca, 1), fp_partial_key()) == kDigestBaseDigestFirst);

  Handshake server(HandshakeRole::Server);
  REQUIRE(server.feed(ca).ok());
  std::vector<uint8_t> reply, c2;
  server.drain_output(reply);
  REQUIRE(a.feed(reply).ok());
  a.drain_output(c2);
  REQUIRE(server.feed(c2).ok());
  CHECK(a.done());
  CHECK(server.done());
  CHECK(a.scheme() == HandshakeScheme::Digest);
}
