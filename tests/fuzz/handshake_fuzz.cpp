// libFuzzer target for protocol::Handshake, both roles.
//
// Input layout: byte 0 = flags, bytes 1..4 = seed for the read splits, the rest = peer bytes.
//   flags bit 0: the client sends a digest C1 (client_digest).
//   flags bit 1: instead of feeding the peer bytes raw, XOR them over a genuine peer stream
//                (a real C0+C1 for the server, a real S0+S1+S2 for the client), so that the
//                fuzzer reaches the digest-verified paths it could never forge by itself.
// Properties checked: no crash; never more consumed than given; random splits give exactly the
// same consumed count, output, scheme and error as one feed() of everything; a failure sticks;
// a finished handshake consumes nothing more; output sizes are the ones the protocol allows.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "base/byte_io.hpp"
#include "protocol/handshake.hpp"

using namespace sluice;
using namespace sluice::protocol;

namespace {

constexpr size_t kHeaderSize = 5;
constexpr size_t kC0C1Size = 1 + kHandshakeSize;
constexpr size_t kS0S1S2Size = 1 + 2 * kHandshakeSize;

void check(bool condition) {
  if (!condition) std::abort();
}

HandshakeOptions options(bool client_digest, uint32_t seed) {
  HandshakeOptions o;
  o.client_digest = client_digest;
  o.time_ms = seed;
  o.random = [state = seed](uint8_t* data, size_t size) mutable {
    for (size_t i = 0; i < size; ++i) {
      state = state * 1664525u + 1013904223u;
      data[i] = static_cast<uint8_t>(state >> 24);
    }
  };
  return o;
}

struct Outcome {
  size_t consumed = 0;
  bool failed = false;
  Errc code = Errc::Ok;
  bool done = false;
  HandshakeScheme scheme = HandshakeScheme::Simple;
  std::vector<uint8_t> output;

  bool operator==(const Outcome&) const = default;
};

// Feeds `in` in pieces whose sizes come from `split_seed` (0 = all at once).
Outcome run(HandshakeRole role, bool client_digest, std::span<const uint8_t> in, uint32_t split_seed) {
  Handshake hs(role, options(client_digest, 7));
  Outcome out;
  uint32_t rng = split_seed;
  while (out.consumed < in.size()) {
    size_t n = in.size() - out.consumed;
    if (split_seed != 0) {
      rng = rng * 1103515245u + 12345u;
      n = std::min<size_t>(n, 1 + (rng >> 16) % 2048);
    }
    auto used = hs.feed(in.subspan(out.consumed, n));
    if (!used) {
      out.failed = true;
      out.code = used.error().code;
      // A failure sticks, with the same code, whatever comes next.
      auto again = hs.feed(in.subspan(out.consumed));
      check(!again.ok() && again.error().code == out.code && hs.failed());
      // A failed feed() reports no count, so how much earlier pieces consumed depends on the
      // split; it does not matter either, since the connection is closed.
      out.consumed = 0;
      break;
    }
    check(*used <= n);
    out.consumed += *used;
    if (*used < n) {
      // Only a finished handshake leaves bytes behind, and it then takes no more.
      check(hs.done());
      check(hs.feed(in.subspan(out.consumed)).value() == 0);
      break;
    }
  }
  out.done = hs.done();
  out.scheme = hs.scheme();
  hs.drain_output(out.output);
  check(!hs.has_output());
  return out;
}

void check_output_size(HandshakeRole role, const Outcome& o) {
  const size_t n = o.output.size();
  if (role == HandshakeRole::Server) {
    check(n == 0 || n == kS0S1S2Size);
  } else {
    check(n == kC0C1Size || n == kC0C1Size + kHandshakeSize);
    check((n == kC0C1Size + kHandshakeSize) == o.done);
  }
  if (o.done) check(!o.failed);
}

// The genuine stream the peer of `role` would send: C0+C1 for a server, S0+S1+S2 for a client.
std::vector<uint8_t> genuine_peer_stream(HandshakeRole role, bool client_digest) {
  Handshake client(HandshakeRole::Client, options(client_digest, 7));
  std::vector<uint8_t> c0c1;
  client.drain_output(c0c1);
  if (role == HandshakeRole::Server) return c0c1;
  Handshake server(HandshakeRole::Server, options(client_digest, 9));
  check(server.feed(c0c1).ok());
  std::vector<uint8_t> reply;
  server.drain_output(reply);
  return reply;
}

void fuzz_role(HandshakeRole role, bool client_digest, bool tamper, std::span<const uint8_t> peer, uint32_t seed) {
  std::vector<uint8_t> in(peer.begin(), peer.end());
  if (tamper) {
    std::vector<uint8_t> base = genuine_peer_stream(role, client_digest);
    for (size_t i = 0; i < in.size() && i < base.size(); ++i) base[i] ^= in[i];
    // Trailing fuzz bytes beyond the genuine stream play the part of the chunk stream.
    if (in.size() > base.size()) base.insert(base.end(), in.begin() + base.size(), in.end());
    in = std::move(base);
  }
  const Outcome whole = run(role, client_digest, in, 0);
  check(whole.consumed <= in.size());
  check_output_size(role, whole);
  check(run(role, client_digest, in, seed | 1u) == whole);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < kHeaderSize) return 0;
  const bool client_digest = (data[0] & 1) != 0;
  const bool tamper = (data[0] & 2) != 0;
  const uint32_t seed = load_u32be(data + 1);
  const std::span<const uint8_t> peer(data + kHeaderSize, size - kHeaderSize);
  fuzz_role(HandshakeRole::Server, client_digest, tamper, peer, seed);
  fuzz_role(HandshakeRole::Client, client_digest, tamper, peer, seed);
  return 0;
}
