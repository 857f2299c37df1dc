// server/webrtc/dtls_transport.hpp and webrtc_certificate.hpp: two transports in one process, an
// active one (the DTLS client) and a passive one (Sluice's role), with the datagrams passed
// between them by hand: the handshake ends on both sides with the same SRTP profile and mirrored
// keys (the client's write key is the server's read key), also when any one datagram is lost and
// the retransmission timer has to resend it; a wrong fingerprint fails the association on either
// side; garbage before or after the handshake costs nothing; close_notify ends it; OpenSSL's own
// s_client completes a handshake with a passive transport over UDP and exports the same keys.
// With SLUICE_DTLS_SEED_DIR set, the client's datagrams of a handshake are written there as
// seeds for tests/fuzz/dtls_transport_fuzz.cpp (2-byte length, then the datagram).
#include <doctest/doctest.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "server/webrtc/dtls_transport.hpp"
#include "server/webrtc/webrtc_certificate.hpp"
#include "unit/media/tool_files.hpp"

using namespace sluice;
using namespace sluice::server;

namespace {

using Datagrams = DtlsTransport::Datagrams;

std::shared_ptr<const WebrtcCertificate> new_certificate() {
  auto c = WebrtcCertificate::generate();
  REQUIRE_MESSAGE(c.ok(), (c.ok() ? "" : c.error().message()));
  return *c;
}

struct Pair {
  std::shared_ptr<const WebrtcCertificate> client_cert = new_certificate();
  std::shared_ptr<const WebrtcCertificate> server_cert = new_certificate();
  std::unique_ptr<DtlsTransport> client, server;

  explicit Pair(std::string client_expects = "", std::string server_expects = "") {
    DtlsConfig c{DtlsRole::Active, client_expects.empty() ? server_cert->fingerprint() : client_expects, 20};
    DtlsConfig s{DtlsRole::Passive, server_expects.empty() ? client_cert->fingerprint() : server_expects, 20};
    auto a = DtlsTransport::create(client_cert, c);
    auto b = DtlsTransport::create(server_cert, s);
    REQUIRE(a.ok());
    REQUIRE(b.ok());
    client = std::move(*a);
    server = std::move(*b);
  }
};

struct Outcome {
  bool client_connected = false, server_connected = false;
  std::string client_error, server_error;
  size_t datagrams = 0, dropped = 0;
  size_t largest = 0;
  std::vector<std::vector<uint8_t>> from_client;  // as sent, for the fuzz seeds
};

// Passes datagrams until both sides are connected, one fails, or nothing moves and no timer runs.
// drop(n) loses the n-th datagram sent (either way, counting from 0).
Outcome run(Pair& p, const std::function<bool(size_t)>& drop = {}) {
  Outcome o;
  Datagrams to_server, to_client;
  REQUIRE(p.client->start(to_server).ok());
  auto deliver = [&](Datagrams& queue, DtlsTransport& to, Datagrams& answers, bool& connected, std::string& error,
                     bool from_client) {
    Datagrams batch = std::move(queue);
    queue.clear();
    for (auto& d : batch) {
      const size_t n = o.datagrams++;
      o.largest = std::max(o.largest, d.size());
      if (from_client) o.from_client.push_back(d);
      if (drop && drop(n)) {
        ++o.dropped;
        continue;
      }
      auto r = to.on_datagram(d, answers);
      if (!r) {
        // The first error is the one that counts: a retransmitted datagram in the same batch
        // (a slow machine makes OpenSSL resend) then only says the association had failed.
        if (error.empty()) error = r.error().message();
      } else if (*r == DtlsEvent::Connected) {
        connected = true;
      }
    }
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    while (!to_server.empty() || !to_client.empty()) {
      deliver(to_server, *p.server, to_client, o.server_connected, o.server_error, true);
      deliver(to_client, *p.client, to_server, o.client_connected, o.client_error, false);
    }
    if ((o.client_connected && o.server_connected) || !o.client_error.empty() || !o.server_error.empty()) break;
    const auto tc = p.client->timeout_ms(), ts = p.server->timeout_ms();
    if (!tc && !ts) break;
    const uint64_t wait = std::min(tc.value_or(UINT64_MAX), ts.value_or(UINT64_MAX));
    std::this_thread::sleep_for(std::chrono::milliseconds(wait + 1));
    CHECK(p.client->on_timeout(to_server).ok());
    CHECK(p.server->on_timeout(to_client).ok());
  }
  return o;
}

void check_mirrored(const Pair& p) {
  const SrtpKeys& c = p.client->srtp_keys();
  const SrtpKeys& s = p.server->srtp_keys();
  CHECK(c.profile == s.profile);
  CHECK(c.size == srtp_key_length(c.profile) + srtp_salt_length(c.profile));
  CHECK(std::vector<uint8_t>(c.local_key().begin(), c.local_key().end()) ==
        std::vector<uint8_t>(s.remote_key().begin(), s.remote_key().end()));
  CHECK(std::vector<uint8_t>(c.remote_key().begin(), c.remote_key().end()) ==
        std::vector<uint8_t>(s.local_key().begin(), s.local_key().end()));
  CHECK(std::vector<uint8_t>(c.local_key().begin(), c.local_key().end()) !=
        std::vector<uint8_t>(c.remote_key().begin(), c.remote_key().end()));
}

// The client's key material as OpenSSL exports it, in RFC 5764's order, split by hand.
std::vector<uint8_t> exported(SSL* ssl, size_t total) {
  std::vector<uint8_t> out(total);
  const char label[] = "EXTRACTOR-dtls_srtp";
  REQUIRE(SSL_export_keying_material(ssl, out.data(), total, label, sizeof label - 1, nullptr, 0, 0) == 1);
  return out;
}

// Datagrams behind 2-byte lengths; with `timer`, an empty one stands for the timer (0xFFFF).
void write_seed(const char* dir, const std::string& name, const std::vector<std::vector<uint8_t>>& datagrams,
                bool timer = false) {
  std::ofstream f(std::string(dir) + "/" + name, std::ios::binary);
  for (const auto& d : datagrams) {
    const size_t n = timer && d.empty() ? 0xFFFF : d.size();
    const char len[2] = {static_cast<char>(n >> 8), static_cast<char>(n & 0xFF)};
    f.write(len, 2);
    f.write(reinterpret_cast<const char*>(d.data()), static_cast<std::streamsize>(d.size()));
  }
}

}  // namespace

TEST_CASE("the certificate: ECDSA P-256, self-signed, its fingerprint in SDP form, DTLS 1.2 only") {
  auto a = new_certificate();
  auto b = new_certificate();
  const std::string& fp = a->fingerprint();
  REQUIRE(fp.size() == 95);
  for (size_t i = 0; i < fp.size(); ++i) {
    if (i % 3 == 2) {
      CHECK(fp[i] == ':');
    } else {
      CHECK(((fp[i] >= '0' && fp[i] <= '9') || (fp[i] >= 'A' && fp[i] <= 'F')));
    }
  }
  CHECK(fp != b->fingerprint());
  unsigned char md[32];
  unsigned len = 0;
  REQUIRE(X509_digest(a->certificate(), EVP_sha256(), md, &len) == 1);
  CHECK(format_fingerprint(*parse_fingerprint(fp)) == fp);
  CHECK(std::equal(md, md + 32, parse_fingerprint(fp)->begin()));
  std::string lower = fp;
  for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  CHECK(parse_fingerprint(lower) == parse_fingerprint(fp));
  CHECK_FALSE(parse_fingerprint(fp.substr(1)));
  CHECK_FALSE(parse_fingerprint(fp.substr(0, 94) + "G"));
  CHECK_FALSE(parse_fingerprint(std::string(95, ':')));
  std::string dashes = fp;
  dashes[2] = '-';
  CHECK_FALSE(parse_fingerprint(dashes));

  EVP_PKEY* key = X509_get0_pubkey(a->certificate());
  REQUIRE(key);
  CHECK(EVP_PKEY_is_a(key, "EC"));
  CHECK(EVP_PKEY_get_bits(key) == 256);
  CHECK(X509_check_issued(a->certificate(), a->certificate()) == X509_V_OK);  // self-signed
  CHECK(X509_cmp_current_time(X509_get0_notBefore(a->certificate())) < 0);
  CHECK(X509_cmp_current_time(X509_get0_notAfter(a->certificate())) > 0);
  CHECK(SSL_CTX_get_min_proto_version(a->ssl_context()) == DTLS1_2_VERSION);
  CHECK(SSL_CTX_get_max_proto_version(a->ssl_context()) == DTLS1_2_VERSION);
}

TEST_CASE("a handshake: both sides connected, AES-GCM chosen, keys mirrored, datagrams within the MTU") {
  Pair p;
  CHECK(p.server->state() == DtlsState::New);
  CHECK_FALSE(p.server->timeout_ms());
  const Outcome o = run(p);
  INFO(o.client_error << " / " << o.server_error);
  REQUIRE(o.client_connected);
  REQUIRE(o.server_connected);
  CHECK(p.client->state() == DtlsState::Connected);
  CHECK(p.server->state() == DtlsState::Connected);
  CHECK(o.largest <= DtlsTransport::kMtu);
  CHECK(p.server->srtp_keys().profile == SrtpProfile::AeadAes128Gcm);
  CHECK(p.server->srtp_keys().size == 28);
  check_mirrored(p);
  CHECK(p.server->summary().starts_with("DTLSv1.2/ECDHE-ECDSA-"));
  CHECK(p.server->summary().ends_with("/SRTP_AEAD_AES_128_GCM"));
  CHECK(p.client->retransmissions() == 0);
  MESSAGE("handshake in " << o.datagrams << " datagrams, the largest " << o.largest
                          << " bytes: " << p.server->summary());

  // RFC 5764 4.2's layout, checked against the exporter itself: client key, server key, client
  // salt, server salt.
  const auto m = exported(p.client->native_handle(), 56);
  const SrtpKeys& k = p.client->srtp_keys();
  CHECK(std::equal(m.begin(), m.begin() + 16, k.local.begin()));             // client key
  CHECK(std::equal(m.begin() + 16, m.begin() + 32, k.remote.begin()));       // server key
  CHECK(std::equal(m.begin() + 32, m.begin() + 44, k.local.begin() + 16));   // client salt
  CHECK(std::equal(m.begin() + 44, m.begin() + 56, k.remote.begin() + 16));  // server salt

  if (const char* dir = std::getenv("SLUICE_DTLS_SEED_DIR")) {
    // The ClientHello, then the first copy of the client's second flight (its first record a
    // Certificate: handshake type 11 after the 13-byte record header), and the ClientHello again
    // after the timer (0xFFFF).
    const auto& hello = o.from_client.front();
    auto flight = std::find_if(o.from_client.begin(), o.from_client.end(),
                               [](const auto& d) { return d.size() > 13 && d[0] == 22 && d[13] == 11; });
    REQUIRE(flight != o.from_client.end());
    write_seed(dir, "client_hello", {hello});
    write_seed(dir, "client_flights", {hello, *flight});
    write_seed(dir, "client_hello_timer", {hello, {}, hello}, true);
  }
}

TEST_CASE("a client that offers only AES128_CM_SHA1_80 gets it, with 30 bytes of key and salt") {
  Pair p;
  REQUIRE(SSL_set_tlsext_use_srtp(p.client->native_handle(), "SRTP_AES128_CM_SHA1_80") == 0);
  const Outcome o = run(p);
  REQUIRE(o.client_connected);
  REQUIRE(o.server_connected);
  CHECK(p.server->srtp_keys().profile == SrtpProfile::Aes128CmSha1_80);
  CHECK(p.server->srtp_keys().size == 30);
  check_mirrored(p);
}

TEST_CASE("any one datagram lost: the retransmission timer resends the flight and the handshake ends") {
  Pair lossless;
  const size_t n = run(lossless).datagrams;
  REQUIRE(n >= 4);
  for (size_t lost = 0; lost < n; ++lost) {
    CAPTURE(lost);
    Pair p;
    const Outcome o = run(p, [lost](size_t i) { return i == lost; });
    INFO(o.client_error << " / " << o.server_error);
    CHECK(o.client_connected);
    CHECK(o.server_connected);
    // A run may need fewer datagrams than the first (OpenSSL also resends a flight whose timer
    // ran out while it reads), so the last indexes may drop nothing.
    CHECK(o.dropped <= 1);
    if (o.client_connected && o.server_connected) check_mirrored(p);
  }
  // Every other datagram lost at first.
  Pair p;
  const Outcome o = run(p, [](size_t i) { return i < 8 && i % 2 == 0; });
  CHECK(o.client_connected);
  CHECK(o.server_connected);
}

TEST_CASE("a certificate that is not the offer's fingerprint fails the association, on either side") {
  const std::string other = new_certificate()->fingerprint();
  SUBCASE("the passive side (Sluice) checks the browser's") {
    Pair p("", other);
    const Outcome o = run(p);
    CHECK_FALSE(o.server_connected);
    CHECK(p.server->state() == DtlsState::Failed);
    CHECK(o.server_error.find("rejected") == 0);
    CHECK(o.server_error.find("a=fingerprint") != std::string::npos);
    CHECK(p.server->failure().find(other) != std::string::npos);
    // The alert reached the client, which fails too.
    CHECK_FALSE(o.client_connected);
    CHECK(o.client_error.find("alert") != std::string::npos);
  }
  SUBCASE("the active side checks the server's") {
    Pair p(other, "");
    const Outcome o = run(p);
    CHECK_FALSE(o.client_connected);
    CHECK_FALSE(o.server_connected);
    CHECK(p.client->state() == DtlsState::Failed);
    CHECK(o.client_error.find("a=fingerprint") != std::string::npos);
  }
  SUBCASE("a malformed one is refused at creation") {
    auto t = DtlsTransport::create(new_certificate(), DtlsConfig{DtlsRole::Passive, "sha-256 AB:CD", 20});
    REQUIRE_FALSE(t.ok());
    CHECK(t.error().code == Errc::Config);
  }
}

TEST_CASE("garbage before the handshake costs only the datagram; garbage after it is dropped") {
  Pair p;
  Datagrams out;
  // Not a record at all, a record of an unknown version, a handshake record whose ClientHello is
  // cut short, and an alert.
  const std::vector<std::vector<uint8_t>> junk = {
      {0x17, 0x42, 0x99, 0x01},
      {0x16, 0x03, 0x03, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 1, 0, 0, 0},
      {0x16, 0xFE, 0xFD, 0, 0, 0, 0, 0, 0, 0, 0, 0, 16, 1, 0, 0, 40, 0, 0, 0, 0, 0, 0, 0, 4, 0xFE, 0xFD, 0, 0},
      {0x15, 0xFE, 0xFD, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 2, 40},
  };
  for (const auto& d : junk) {
    auto r = p.server->on_datagram(d, out);
    if (!r) MESSAGE("refused: " << r.error().message());
    CHECK(p.server->state() == DtlsState::New);
    CHECK(out.empty());
  }
  // The real handshake still works on the same transport.
  const Outcome o = run(p);
  REQUIRE(o.client_connected);
  REQUIRE(o.server_connected);
  for (const auto& d : junk) {
    auto r = p.server->on_datagram(d, out);
    CHECK(r.ok());
    CHECK(p.server->state() == DtlsState::Connected);
  }
  // A record of the right epoch whose authentication fails is dropped too (RFC 6347 4.1.2.7).
  std::vector<uint8_t> forged = {0x17, 0xFE, 0xFD, 0, 1, 0, 0, 0, 0, 0, 9, 0, 40};
  forged.resize(forged.size() + 40, 0xAA);
  CHECK(p.server->on_datagram(forged, out).ok());
  CHECK(p.server->state() == DtlsState::Connected);
}

TEST_CASE("close_notify ends the association on the other side; application data is ignored") {
  Pair p;
  const Outcome o = run(p);
  REQUIRE(o.server_connected);
  // Application data from the client (what a data channel would carry): read and dropped.
  REQUIRE(SSL_write(p.client->native_handle(), "hello", 5) == 5);
  Datagrams to_server, to_client;
  // The client wrote through OpenSSL directly: its BIO kept the record for the next call.
  p.client->close(to_server);
  REQUIRE(to_server.size() == 2);
  auto r = p.server->on_datagram(to_server[0], to_client);
  REQUIRE(r.ok());
  CHECK(*r == DtlsEvent::None);
  r = p.server->on_datagram(to_server[1], to_client);
  REQUIRE(r.ok());
  CHECK(*r == DtlsEvent::Closed);
  CHECK(p.server->state() == DtlsState::Closed);
  CHECK(to_client.size() == 1);  // our close_notify in answer
  CHECK(p.client->state() == DtlsState::Closed);
  // Late datagrams after the end are dropped.
  r = p.server->on_datagram(to_server[0], to_client);
  CHECK(r.ok());
}

TEST_CASE("the retransmission timer: running while a flight waits, starting at the configured value") {
  Pair p;
  Datagrams to_server;
  REQUIRE(p.client->start(to_server).ok());
  REQUIRE(to_server.size() == 1);
  const auto t = p.client->timeout_ms();
  REQUIRE(t);
  CHECK(*t <= 20);
  // Too early: nothing is resent.
  Datagrams again;
  CHECK(p.client->on_timeout(again).ok());
  if (*p.client->timeout_ms() > 5) CHECK(again.empty());
  std::this_thread::sleep_for(std::chrono::milliseconds(25));
  CHECK(p.client->on_timeout(again).ok());
  REQUIRE(again.size() == 1);
  // The same ClientHello in a record with the next sequence number (bytes 5-10).
  REQUIRE(again[0].size() == to_server[0].size());
  CHECK(std::equal(again[0].begin() + 13, again[0].end(), to_server[0].begin() + 13));
  CHECK(p.client->retransmissions() == 1);
  CHECK(*p.client->timeout_ms() > 20);  // doubled
}

// A foreign implementation: OpenSSL's own s_client (its DTLS client with use_srtp, not our
// transport) against a passive transport behind a UDP socket of the test. It offers both profiles,
// CM first, so the server's order picks GCM; the key material it exports is ours.
TEST_CASE("interop: openssl s_client -dtls1_2 -use_srtp against a passive transport on a UDP socket") {
  if (sluice::test::skipped_without(sluice::test::run("openssl version >/dev/null 2>&1").has_value(), "openssl")) {
    return;
  }
  sluice::test::TempDir dir("sluice-dtls");
  const std::string d = dir.path.string();
  REQUIRE(
      sluice::test::run("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 "
                        "-subj /CN=peer -keyout " +
                        d + "/k.pem -out " + d + "/c.pem >/dev/null 2>&1"));
  const auto fp_line = sluice::test::run("openssl x509 -in " + d + "/c.pem -noout -fingerprint -sha256");
  REQUIRE(fp_line);
  const std::string peer_fp = fp_line->substr(fp_line->find('=') + 1, 95);

  const int fd = socket(AF_INET, SOCK_DGRAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  socklen_t alen = sizeof addr;
  REQUIRE(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &alen) == 0);
  const int port = ntohs(addr.sin_port);

  auto cert = new_certificate();
  auto t = DtlsTransport::create(cert, DtlsConfig{DtlsRole::Passive, peer_fp});
  REQUIRE(t.ok());
  DtlsTransport& server = **t;

  // stdin stays open for a second after the handshake, then s_client sends close_notify.
  std::string client_output;
  std::thread client([&] {
    client_output =
        sluice::test::run("sleep 2 | openssl s_client -dtls1_2 -connect 127.0.0.1:" + std::to_string(port) +
                          " -use_srtp SRTP_AES128_CM_SHA1_80:SRTP_AEAD_AES_128_GCM -cert " + d + "/c.pem -key " + d +
                          "/k.pem -keymatexport EXTRACTOR-dtls_srtp "
                          "-keymatexportlen 56 -mtu 1200 2>&1")
            .value_or("(s_client failed)");
  });
  bool connected = false, closed = false;
  std::string error;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (!closed && error.empty() && std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    const auto wait = server.timeout_ms();
    if (poll(&p, 1, static_cast<int>(std::min<uint64_t>(wait.value_or(100), 100))) <= 0) {
      Datagrams out;
      CHECK(server.on_timeout(out).ok());
      for (auto& o : out) sendto(fd, o.data(), o.size(), 0, reinterpret_cast<sockaddr*>(&addr), alen);
      continue;
    }
    uint8_t buf[2048];
    alen = sizeof addr;
    const ssize_t n = recvfrom(fd, buf, sizeof buf, 0, reinterpret_cast<sockaddr*>(&addr), &alen);
    if (n <= 0) continue;
    Datagrams out;
    auto r = server.on_datagram(std::span<const uint8_t>(buf, static_cast<size_t>(n)), out);
    for (auto& o : out) sendto(fd, o.data(), o.size(), 0, reinterpret_cast<sockaddr*>(&addr), alen);
    if (!r) {
      error = r.error().message();
    } else if (*r == DtlsEvent::Connected) {
      connected = true;
    } else if (*r == DtlsEvent::Closed) {
      closed = true;
    }
  }
  client.join();
  close(fd);
  INFO(error);
  INFO(client_output);
  CHECK(connected);
  CHECK(closed);  // s_client's close_notify
  REQUIRE(server.state() == DtlsState::Closed);
  CHECK(server.srtp_keys().profile == SrtpProfile::AeadAes128Gcm);
  CHECK(client_output.find("SRTP Extension negotiated, profile=SRTP_AEAD_AES_128_GCM") != std::string::npos);
  // s_client's export, RFC 5764's order: client key, server key, client salt, server salt.
  const size_t at = client_output.find("Keying material: ");
  REQUIRE(at != std::string::npos);
  const std::string hex = client_output.substr(at + 17, 112);
  const SrtpKeys& k = server.srtp_keys();
  auto h = [](std::span<const uint8_t> b) {
    std::string s;
    char x[3];
    for (uint8_t v : b) {
      std::snprintf(x, sizeof x, "%02X", v);
      s += x;
    }
    return s;
  };
  CHECK(hex.substr(0, 32) == h(k.remote_key().first(16)));
  CHECK(hex.substr(32, 32) == h(k.local_key().first(16)));
  CHECK(hex.substr(64, 24) == h(k.remote_key().subspan(16)));
  CHECK(hex.substr(88, 24) == h(k.local_key().subspan(16)));
}
