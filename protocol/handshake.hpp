// The RTMP handshake (C0/C1/C2 and S0/S1/S2), sans-I/O, for both ends of a connection.
//
// Lifecycle:
//  1. Construct with a role. A client queues C0+C1 at once; a server queues nothing yet.
//  2. Call feed() with every received byte until done() or failed(). feed() may stop at any byte
//     boundary: one byte at a time, random splits and one big buffer give identical results.
//  3. After each feed() (and after construction), call drain_output() and send what it appended.
//  4. When done() is true, the bytes feed() did not consume belong to the chunk stream.
//
// Schemes (docs/protocol.md, "Simple handshake" and "Digest handshake"): a server answers a
// digest-signed C1 with a digest-signed S1/S2 in the client's own layout, and anything else with
// the simple scheme; it never rejects a C1 and never validates C2. A client that sent a digest C1
// verifies a digest S1 and the S2 signature, as FFmpeg does when it plays. RTMPE (C0 = 6, 8 or 9)
// is not supported.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "protocol/handshake_digest.hpp"
#include "base/result.hpp"

namespace sluice::protocol {

enum class HandshakeScheme : uint8_t { Simple, Digest };
enum class HandshakeRole : uint8_t { Server, Client };

// The version byte of C0/S0 for plain RTMP.
inline constexpr uint8_t kRtmpVersion = 3;

struct HandshakeOptions {
  // Client only: send a digest-signed C1 (FFmpeg style, version 9.0.124.2) or a plain one with
  // zero version bytes (librtmp/OBS style).
  bool client_digest = true;
  // Fills the "random" parts of C1/S1/C2/S2. Default: OpenSSL RAND_bytes. Tests inject a
  // deterministic one so that the output is reproducible.
  std::function<void(uint8_t*, size_t)> random;
  // Value of the time field in C1/S1.
  uint32_t time_ms = 0;
};

class Handshake {
 public:
  explicit Handshake(HandshakeRole role, HandshakeOptions options = {});

  // Consumes handshake bytes and returns how many it took. It takes nothing once done(): bytes
  // after the end of the handshake belong to the chunk stream.
  // Errors (the handshake is then failed() and every later call returns the same error):
  //  - Errc::BadVersion: C0 is not 3 (RTMPE 6/8/9 included), or S0 is not 3.
  //  - Errc::BadDigest (client only): a digest S1 whose digest does not verify, or an S2 whose
  //    signature does not match our C1 digest.
  Result<size_t> feed(std::span<const uint8_t> in);

  // Appends the queued bytes to send to `out` and clears the queue.
  void drain_output(std::vector<uint8_t>& out);
  bool has_output() const { return !output_.empty(); }

  // The handshake is complete for this side: a server has read C2, a client has queued C2.
  bool done() const { return state_ == State::Done; }
  bool failed() const { return state_ == State::Failed; }
  // What was negotiated: for a server, what C1 used; for a client, whether S1 was verified as a
  // digest S1. Simple until C1 (server) or S1 (client) has been read.
  HandshakeScheme scheme() const { return scheme_; }
  // The C0 (server) or S0 (client) byte received; 0 until it arrives.
  uint8_t peer_version() const { return peer_version_; }
  HandshakeRole role() const { return role_; }

 private:
  // The peer sends a version byte, then packet 1 (C1/S1), then packet 2 (C2/S2).
  enum class State : uint8_t { ReadVersion, ReadPacket1, ReadPacket2, Done, Failed };
  using Packet = std::array<uint8_t, kHandshakeSize>;

  size_t fill_packet(std::span<const uint8_t> in);
  void on_version(uint8_t version);
  void on_packet();
  void on_c1();
  void on_s1();
  void on_s2();
  void queue_c0_c1();
  void queue_s1(std::optional<size_t> digest_base);
  void queue_s2(const Packet& c1, std::optional<size_t> digest_base);
  void prepare_c2(const Packet& s1, std::optional<size_t> digest_base);
  void fill_random(std::span<uint8_t> bytes);
  void fail(Error error);

  HandshakeRole role_;
  HandshakeOptions options_;
  State state_ = State::ReadVersion;
  HandshakeScheme scheme_ = HandshakeScheme::Simple;
  uint8_t peer_version_ = 0;
  Packet input_{};  // The peer packet being read.
  size_t input_len_ = 0;
  HandshakeDigest c1_digest_{};  // Client: our C1 digest, which keys the S2 signature.
  Packet c2_{};                  // Client: C2, built from S1 and sent once S2 is accepted.
  std::vector<uint8_t> output_;
  Error error_;
};

}  // namespace sluice::protocol
