#include "protocol/handshake.hpp"

#include <openssl/rand.h>

#include <algorithm>
#include <string>
#include <utility>

#include "base/byte_io.hpp"

namespace sluice::protocol {
namespace {

// C1/S1 = time (4, big-endian) | version or zero (4) | 1528 bytes of random fill.
constexpr size_t kVersionOffset = 4;
constexpr size_t kVersionSize = 4;
constexpr size_t kRandomOffset = kVersionOffset + kVersionSize;

// FFmpeg's C1 version (Flash Player 9.0.124.2). Any non-zero value announces a digest C1.
constexpr std::array<uint8_t, kVersionSize> kClientDigestVersion = {9, 0, 124, 2};
// NGX's S1 version. A non-zero S1 version makes FFmpeg and librtmp verify the S1 digest and the
// S2 signature, so it is only ever sent together with both.
constexpr std::array<uint8_t, kVersionSize> kServerDigestVersion = {0x0D, 0x0E, 0x0A, 0x0D};

// RTMPE versions: 6 = DH/RC4, 8 and 9 = RC4 plus XTEA/Blowfish-scrambled signatures.
constexpr bool is_rtmpe_version(uint8_t version) { return version == 6 || version == 8 || version == 9; }
// The first byte of a TLS record carrying a ClientHello: an RTMPS client on a plain port.
constexpr uint8_t kTlsHandshakeRecord = 0x16;
// Versions from here up are printable ASCII: most likely an HTTP request on the RTMP port.
constexpr uint8_t kFirstPrintable = 0x20;

bool has_version(std::span<const uint8_t, kHandshakeSize> packet) {
  auto version = packet.subspan<kVersionOffset, kVersionSize>();
  return std::any_of(version.begin(), version.end(), [](uint8_t b) { return b != 0; });
}

void default_random(uint8_t* data, size_t size) {
  // The handshake "random" bytes protect nothing (the digests use public keys), so if the
  // generator ever fails, the zero-initialised bytes it leaves behind still make a valid packet.
  constexpr size_t kMaxChunk = size_t{1} << 16;
  while (size > 0) {
    const size_t n = std::min(size, kMaxChunk);
    if (RAND_bytes(data, static_cast<int>(n)) != 1) return;
    data += n;
    size -= n;
  }
}

std::string describe_bad_c0(uint8_t version) {
  const std::string prefix = "C0 version " + std::to_string(version);
  if (is_rtmpe_version(version)) return prefix + ": RTMPE not supported";
  if (version == kTlsHandshakeRecord) return prefix + ": looks like TLS (an rtmps:// client on a plain port?)";
  if (version >= kFirstPrintable) return prefix + ": looks like a text protocol, not RTMP";
  return prefix + ": only version 3 is supported";
}

std::string describe_bad_s0(uint8_t version) {
  return "S0 version " + std::to_string(version) + ": expected " + std::to_string(kRtmpVersion);
}

}  // namespace

Handshake::Handshake(HandshakeRole role, HandshakeOptions options) : role_(role), options_(std::move(options)) {
  if (!options_.random) options_.random = default_random;
  if (role_ == HandshakeRole::Client) queue_c0_c1();
}

Result<size_t> Handshake::feed(std::span<const uint8_t> in) {
  size_t used = 0;
  while (used < in.size() &&
         (state_ == State::ReadVersion || state_ == State::ReadPacket1 || state_ == State::ReadPacket2)) {
    if (state_ == State::ReadVersion) {
      on_version(in[used++]);
      continue;
    }
    used += fill_packet(in.subspan(used));
    if (input_len_ == kHandshakeSize) on_packet();
  }
  if (failed()) return error_;
  return used;
}

void Handshake::drain_output(std::vector<uint8_t>& out) {
  out.insert(out.end(), output_.begin(), output_.end());
  output_.clear();
}

size_t Handshake::fill_packet(std::span<const uint8_t> in) {
  const size_t n = std::min(in.size(), kHandshakeSize - input_len_);
  std::copy_n(in.begin(), n, input_.begin() + input_len_);
  input_len_ += n;
  return n;
}

void Handshake::on_version(uint8_t version) {
  peer_version_ = version;
  if (version == kRtmpVersion) {
    state_ = State::ReadPacket1;
    return;
  }
  fail(Error(Errc::BadVersion, role_ == HandshakeRole::Server ? describe_bad_c0(version) : describe_bad_s0(version)));
}

void Handshake::on_packet() {
  input_len_ = 0;
  const bool first = state_ == State::ReadPacket1;
  if (role_ == HandshakeRole::Server) {
    if (first) {
      on_c1();
    } else {
      // C2 is deliberately not validated: FFmpeg's C2 does not match what the spec asks for,
      // and neither SRS nor NGX look at it.
      state_ = State::Done;
    }
    return;
  }
  if (first) {
    on_s1();
  } else {
    on_s2();
  }
}

void Handshake::on_c1() {
  // A C1 with zero version bytes is simple. One with a version but no digest that verifies in
  // either layout is answered with the simple scheme too, as NGX and SRS do: rejecting it would
  // only lose odd clients, and a zero-version S1 is accepted unverified by every client we know.
  std::optional<size_t> digest_base;
  if (has_version(input_)) digest_base = find_digest_base(input_, fp_partial_key());
  scheme_ = digest_base ? HandshakeScheme::Digest : HandshakeScheme::Simple;
  // S0, S1 and S2 go out together, as one 3073-byte write, the way NGX and SRS send them.
  output_.push_back(kRtmpVersion);
  queue_s1(digest_base);
  queue_s2(input_, digest_base);
  state_ = State::ReadPacket2;
}

void Handshake::on_s1() {
  // Only a digest client verifies, and only a digest S1 (non-zero version): a zero-version S1
  // is a simple answer and FFmpeg accepts it unverified too.
  std::optional<size_t> digest_base;
  if (options_.client_digest && has_version(input_)) {
    digest_base = find_digest_base(input_, fms_partial_key());
    if (!digest_base) return fail(Error(Errc::BadDigest, "S1 digest does not verify in either layout"));
    scheme_ = HandshakeScheme::Digest;
  }
  prepare_c2(input_, digest_base);
  state_ = State::ReadPacket2;
}

void Handshake::on_s2() {
  // In the simple scheme S2 should echo C1, but real servers get the time fields wrong, so like
  // librtmp and FFmpeg we do not check it. A digest S2 must be signed with our C1 digest.
  if (scheme_ == HandshakeScheme::Digest && !verify_response(input_, fms_full_key(), c1_digest_)) {
    return fail(Error(Errc::BadDigest, "S2 signature does not match our C1 digest"));
  }
  output_.insert(output_.end(), c2_.begin(), c2_.end());
  state_ = State::Done;
}

void Handshake::queue_c0_c1() {
  Packet c1{};
  store_u32be(c1.data(), options_.time_ms);
  fill_random(std::span(c1).subspan(kRandomOffset));
  if (options_.client_digest) {
    // Layout B (digest block at 8) is what FFmpeg and librtmp send for plain RTMP.
    std::copy(kClientDigestVersion.begin(), kClientDigestVersion.end(), c1.begin() + kVersionOffset);
    sign_packet(c1, kDigestBaseDigestFirst, fp_partial_key());
    c1_digest_ = read_packet_digest(c1, kDigestBaseDigestFirst);
  }
  output_.push_back(kRtmpVersion);
  output_.insert(output_.end(), c1.begin(), c1.end());
}

void Handshake::queue_s1(std::optional<size_t> digest_base) {
  Packet s1{};
  store_u32be(s1.data(), options_.time_ms);
  fill_random(std::span(s1).subspan(kRandomOffset));
  if (digest_base) {
    // Mirror the client's layout: librtmp tries its own layout first, FFmpeg tries both.
    std::copy(kServerDigestVersion.begin(), kServerDigestVersion.end(), s1.begin() + kVersionOffset);
    sign_packet(s1, *digest_base, fms_partial_key());
  }
  output_.insert(output_.end(), s1.begin(), s1.end());
}

void Handshake::queue_s2(const Packet& c1, std::optional<size_t> digest_base) {
  if (!digest_base) {
    // Simple scheme: S2 is C1 verbatim, as NGX, SRS and FFmpeg's server mode send it.
    output_.insert(output_.end(), c1.begin(), c1.end());
    return;
  }
  Packet s2{};
  fill_random(std::span(s2).first(kSignedPayloadSize));
  sign_response(s2, fms_full_key(), read_packet_digest(c1, *digest_base));
  output_.insert(output_.end(), s2.begin(), s2.end());
}

void Handshake::prepare_c2(const Packet& s1, std::optional<size_t> digest_base) {
  if (!digest_base) {
    // Simple scheme: C2 echoes S1.
    c2_ = s1;
    return;
  }
  c2_ = {};
  fill_random(std::span(c2_).first(kSignedPayloadSize));
  sign_response(c2_, fp_full_key(), read_packet_digest(s1, *digest_base));
}

void Handshake::fill_random(std::span<uint8_t> bytes) { options_.random(bytes.data(), bytes.size()); }

void Handshake::fail(Error error) {
  error_ = std::move(error);
  state_ = State::Failed;
}

}  // namespace sluice::protocol
