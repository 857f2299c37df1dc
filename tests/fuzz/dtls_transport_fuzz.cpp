// libFuzzer target for the DTLS transport of a WebRTC session (server/webrtc/dtls_transport.hpp)
// in Sluice's role, passive: the input is the datagrams a peer sends, each behind a 2-byte
// big-endian length; a length byte pair of 0xFFFF instead fires the retransmission timer. The
// seeds are the client's datagrams of a real handshake (ClientHello with use_srtp, then its
// Certificate ... Finished flight), written by tests/unit/server/webrtc/dtls_transport_test.cpp.
// Properties: no crash or sanitizer report; every datagram we send fits kMtu; a failure before
// the handshake started sends nothing and leaves the transport ready for a real ClientHello; after
// a failure every datagram is refused; the handshake never completes (the fuzzer cannot hold the
// key of the certificate the fingerprint names).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "server/webrtc/dtls_transport.hpp"
#include "server/webrtc/webrtc_certificate.hpp"
#include "tests/fuzz/fuzz_input.hpp"

using namespace sluice;
using namespace sluice::server;

namespace {

constexpr uint16_t kTimer = 0xFFFF;
constexpr int kMaxDatagrams = 64;  // an input is one session's first moments, not a long stream

const std::shared_ptr<const WebrtcCertificate>& certificate() {
  static const std::shared_ptr<const WebrtcCertificate> c = [] {
    auto r = WebrtcCertificate::generate();
    FUZZ_CHECK(r.ok());
    return *r;
  }();
  return c;
}

// A fingerprint no input can match: the peer is whoever the fuzzer pretends to be.
const char kPeerFingerprint[] =
    "00:11:22:33:44:55:66:77:88:99:AA:BB:CC:DD:EE:FF:00:11:22:33:44:55:66:77:88:99:AA:BB:CC:DD:EE:FF";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto t = DtlsTransport::create(certificate(), DtlsConfig{DtlsRole::Passive, kPeerFingerprint, 400});
  FUZZ_CHECK(t.ok());
  DtlsTransport& dtls = **t;
  fuzz::FuzzInput in{std::span(data, size)};
  for (int i = 0; i < kMaxDatagrams && in.left() >= 2; ++i) {
    const auto len = static_cast<uint16_t>(in.be(2));
    DtlsTransport::Datagrams out;
    const DtlsState before = dtls.state();
    if (len == kTimer) {
      (void)dtls.on_timeout(out);  // early: OpenSSL's clock decides, usually nothing
    } else {
      auto r = dtls.on_datagram(in.bytes(len), out);
      if (!r) {
        if (before == DtlsState::New) {
          FUZZ_CHECK(out.empty());
          FUZZ_CHECK(dtls.state() == DtlsState::New);
        } else if (before == DtlsState::Failed) {
          FUZZ_CHECK(out.empty());
        } else {
          FUZZ_CHECK(dtls.state() == DtlsState::Failed || dtls.state() == DtlsState::Closed);
          FUZZ_CHECK(!dtls.failure().empty());
        }
      } else {
        FUZZ_CHECK(*r != DtlsEvent::Connected);
      }
    }
    FUZZ_CHECK(dtls.state() != DtlsState::Connected);
    for (const auto& d : out) FUZZ_CHECK(!d.empty() && d.size() <= DtlsTransport::kMtu);
  }
  return 0;
}
