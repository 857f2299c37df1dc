// Building STUN messages: the answers an ICE-lite server sends to connectivity checks (a Binding
// success with XOR-MAPPED-ADDRESS, or an error), and, for tests and seeds, requests the way
// Chromium sends them. docs/webrtc-protocol.md ("STUN") says what each attribute is for.
//
// Lifecycle:
//  1. Construct a StunWriter with the method, class and transaction id.
//  2. add_*() attributes in the order they go on the wire; each is padded to 4 bytes with zeros.
//  3. finish() appends MESSAGE-INTEGRITY (when given a key) and FINGERPRINT (when asked), which
//     always come last, in that order, and returns the message. The writer is spent.
//  4. Messages stay under kMaxStunMessage: stun_integrity() works on a copy of that size, and the
//     answers built here are under 100 bytes.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "protocol/proxy_header.hpp"
#include "protocol/webrtc/stun.hpp"

namespace sluice::protocol::webrtc {

class StunWriter {
 public:
  StunWriter(uint16_t method, StunClass kind, const StunTransactionId& transaction_id);

  void add(uint16_t type, std::span<const uint8_t> value);
  void add_string(uint16_t type, std::string_view value);
  void add_u32(uint16_t type, uint32_t value);
  void add_u64(uint16_t type, uint64_t value);
  void add_flag(uint16_t type) { add(type, {}); }
  // XOR-MAPPED-ADDRESS (or another XOR address type) of an IPv4 or IPv6 endpoint.
  void add_xor_address(uint16_t type, const Endpoint& endpoint);
  // ERROR-CODE: code 300..699 and a reason phrase (cut at 128 bytes, RFC 5389 asks for < 128 chars).
  void add_error_code(uint16_t code, std::string_view reason);

  // An empty key: no MESSAGE-INTEGRITY.
  std::vector<uint8_t> finish(std::span<const uint8_t> integrity_key, bool fingerprint = true) &&;
  std::vector<uint8_t> finish(std::string_view integrity_key, bool fingerprint = true) && {
    return std::move(*this).finish(
        std::span(reinterpret_cast<const uint8_t*>(integrity_key.data()), integrity_key.size()), fingerprint);
  }

 private:
  void set_length(size_t length);
  std::vector<uint8_t> out_;
};

// The Binding success response to `request` from `peer` (the datagram's source address and port):
// XOR-MAPPED-ADDRESS, MESSAGE-INTEGRITY keyed with our ice-pwd, FINGERPRINT.
std::vector<uint8_t> build_binding_success(const StunMessage& request, const Endpoint& peer,
                                           std::string_view local_pwd);

// A Binding error response: ERROR-CODE (400 Bad Request, 401 Unauthorized, 420 Unknown Attribute
// with the request's unknown attributes listed, 487 Role Conflict), MESSAGE-INTEGRITY when
// `local_pwd` is not empty (never for 400 and 401: the request's credentials did not check, so the
// client cannot check ours either), FINGERPRINT.
std::vector<uint8_t> build_binding_error(const StunMessage& request, uint16_t code, std::string_view reason,
                                         std::string_view local_pwd);

}  // namespace sluice::protocol::webrtc
