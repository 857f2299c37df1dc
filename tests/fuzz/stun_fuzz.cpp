// libFuzzer target for STUN (protocol/webrtc/stun.hpp) and the ICE-lite answer
// (protocol/webrtc/ice_lite.hpp): the input is one UDP datagram on the WebRTC port.
// The seeds' MESSAGE-INTEGRITY is keyed with kPassword (tests/fuzz/webrtc_seeds.py), and the
// session is the one the USERNAME names, so that the success path is reached.
// Properties: no crash or sanitizer report; a parsed message keeps its limits (USERNAME at most 512
// bytes, error codes 300..699, FINGERPRINT present only when it matched); the first-byte
// demultiplexer calls it STUN; rebuilt with the writer from its parsed fields, it parses to the
// same fields; every answer is itself a STUN message that parses, with the request's transaction
// id and FINGERPRINT, and MESSAGE-INTEGRITY keyed with our password exactly when it should have.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "base/byte_io.hpp"
#include "protocol/webrtc/datagram_kind.hpp"
#include "protocol/webrtc/ice_lite.hpp"
#include "protocol/webrtc/stun.hpp"
#include "protocol/webrtc/stun_writer.hpp"
#include "tests/fuzz/fuzz_input.hpp"

using namespace sluice;
using namespace sluice::protocol;
using namespace sluice::protocol::webrtc;

namespace {

constexpr std::string_view kPassword = "fuzz-ice-password-0123456789";

// The fields the writer can carry, rebuilt and parsed again: the same fields come back.
void check_rebuild(const StunMessage& m) {
  StunWriter w(m.method, m.kind, m.transaction_id);
  if (m.username) w.add_string(stun_attribute::kUsername, *m.username);
  if (m.priority) w.add_u32(stun_attribute::kPriority, *m.priority);
  if (m.use_candidate) w.add_flag(stun_attribute::kUseCandidate);
  if (m.ice_controlling) w.add_u64(stun_attribute::kIceControlling, *m.ice_controlling);
  if (m.ice_controlled) w.add_u64(stun_attribute::kIceControlled, *m.ice_controlled);
  if (m.xor_mapped_address) w.add_xor_address(stun_attribute::kXorMappedAddress, *m.xor_mapped_address);
  if (m.error_code) w.add_error_code(*m.error_code, m.error_reason.substr(0, 128));
  const std::vector<uint8_t> bytes = std::move(w).finish(kPassword);
  auto again = parse_stun(bytes);
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(again->method == m.method && again->kind == m.kind);
  FUZZ_CHECK(again->transaction_id == m.transaction_id);
  FUZZ_CHECK(again->username == m.username);
  FUZZ_CHECK(again->priority == m.priority);
  FUZZ_CHECK(again->use_candidate == m.use_candidate);
  FUZZ_CHECK(again->ice_controlling == m.ice_controlling);
  FUZZ_CHECK(again->ice_controlled == m.ice_controlled);
  FUZZ_CHECK(again->xor_mapped_address == m.xor_mapped_address);
  FUZZ_CHECK(again->error_code == m.error_code);
  FUZZ_CHECK(again->has_fingerprint);
  FUZZ_CHECK(stun_integrity_ok(*again, kPassword));
}

void check_answer(const StunMessage& m) {
  const std::string_view ufrag = stun_local_ufrag(m).value_or("nobody");
  const IceCredentials creds{ufrag, kPassword, {}};
  Endpoint peer;
  peer.port = 40000;
  peer.address.v6 = m.transaction_id[0] & 1;  // both families from the seeds
  for (size_t i = 0; i < 16; ++i) peer.address.bytes[i] = m.transaction_id[i % 12];
  if (!peer.address.v6) std::fill(peer.address.bytes.begin() + 4, peer.address.bytes.end(), 0);
  const BindingOutcome out = answer_binding_request(m, creds, peer);
  if (out.action == BindingOutcome::Action::Ignore) {
    FUZZ_CHECK(out.response.empty());
    FUZZ_CHECK(!m.is_binding_request());
    return;
  }
  FUZZ_CHECK(m.is_binding_request());
  auto r = parse_stun(out.response);
  FUZZ_CHECK(r.ok());
  FUZZ_CHECK(r->transaction_id == m.transaction_id);
  FUZZ_CHECK(r->method == kStunBinding);
  FUZZ_CHECK(r->has_fingerprint);
  if (out.authenticated) {
    FUZZ_CHECK(stun_integrity_ok(m, kPassword));
    FUZZ_CHECK(r->kind == StunClass::SuccessResponse);
    FUZZ_CHECK(r->xor_mapped_address == peer);
    FUZZ_CHECK(stun_integrity_ok(*r, kPassword));
    FUZZ_CHECK(out.nominated == m.use_candidate);
  } else {
    FUZZ_CHECK(r->kind == StunClass::ErrorResponse);
    FUZZ_CHECK(r->error_code.has_value());
    const uint16_t code = *r->error_code;
    FUZZ_CHECK(code == 400 || code == 401 || code == 420 || code == 487);
    // 400 and 401 cannot be authenticated; 420 and 487 are answers to a request that was.
    FUZZ_CHECK(r->integrity_offset.has_value() == (code == 420 || code == 487));
    if (code == 420 || code == 487) FUZZ_CHECK(stun_integrity_ok(*r, kPassword));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> datagram(data, size);
  auto m = parse_stun(datagram);
  if (!m) return 0;
  FUZZ_CHECK(classify_datagram(datagram) == DatagramKind::Stun);
  FUZZ_CHECK(looks_like_stun(datagram));
  FUZZ_CHECK(!m->username || m->username->size() <= kMaxStunUsername);
  FUZZ_CHECK(!m->error_code || (*m->error_code >= 300 && *m->error_code <= 699));
  if (m->has_fingerprint) {
    FUZZ_CHECK(size >= kStunHeaderSize + 8);
    FUZZ_CHECK(load_u32be(data + size - 4) == stun_fingerprint(datagram.first(size - 8)));
  }
  check_rebuild(*m);
  check_answer(*m);
  return 0;
}
