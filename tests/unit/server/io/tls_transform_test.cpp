// server/io/tls_transform.hpp and tls_context.hpp: a client and a server transform talking to each
// other in memory, with certificates made by the openssl command line: the bytes go through
// unchanged, big writes make few records, SNI picks the certificate, verification refuses a
// wrong name or an unknown issuer, and what is not TLS is an error, never a crash.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "server/io/tls_context.hpp"
#include "server/io/tls_transform.hpp"
#include "unit/media/tool_files.hpp"

using namespace sluice;
using namespace sluice::server;

namespace {

struct Certs {
  sluice::test::TempDir dir{"sluice-tls"};
  std::string ca, cert, key, other_cert, other_key;
  bool ok = false;

  Certs() {
    const std::string d = dir.path.string();
    ca = d + "/ca.pem";
    cert = d + "/rtmp.pem";
    key = d + "/rtmp.key";
    other_cert = d + "/other.pem";
    other_key = d + "/other.key";
    const std::string q = " >/dev/null 2>&1";
    ok = sluice::test::run("openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=test-ca -keyout " + d +
                           "/ca.key -out " + ca + q)
             .has_value() &&
         sluice::test::run("openssl req -newkey rsa:2048 -nodes -subj /CN=rtmp.test -keyout " + key + " -out " + d +
                           "/rtmp.csr" + q)
             .has_value() &&
         sluice::test::run("printf 'subjectAltName=DNS:rtmp.test,DNS:*.live.test' > " + d + "/san.ext && openssl x509 -req -in " +
                           d + "/rtmp.csr -CA " + ca + " -CAkey " + d + "/ca.key -CAcreateserial -days 2 -extfile " +
                           d + "/san.ext -out " + cert + q)
             .has_value() &&
         sluice::test::run("openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=other.test -addext "
                           "subjectAltName=DNS:other.test -keyout " + other_key + " -out " + other_cert + q)
             .has_value();
  }
};

const Certs& certs() {
  static Certs c;
  return c;
}

// Moves bytes both ways until neither side has anything to say; false on an error.
Result<void> pump(TlsTransform& client, TlsTransform& server, std::vector<uint8_t>& at_client,
                  std::vector<uint8_t>& at_server) {
  for (int round = 0; round < 20; ++round) {
    std::vector<uint8_t> c2s, s2c;
    client.take_output(c2s);
    if (!c2s.empty()) {
      if (auto r = server.feed(c2s, at_server); !r) return r;
    }
    server.take_output(s2c);
    if (!s2c.empty()) {
      if (auto r = client.feed(s2c, at_client); !r) return r;
    }
    if (c2s.empty() && s2c.empty()) break;
  }
  return {};
}

std::vector<uint8_t> pattern(size_t n) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(i * 131 + (i >> 8));
  return v;
}

}  // namespace

TEST_CASE("a verified handshake, then bytes both ways unchanged, in few records") {
  REQUIRE_MESSAGE(certs().ok, "openssl could not make the test certificates");
  auto sctx = TlsContext::server({{certs().cert, certs().key}});
  REQUIRE_MESSAGE(sctx.ok(), sctx.error().message());
  auto cctx = TlsContext::client(true, certs().ca);
  REQUIRE(cctx.ok());
  TlsTransform server(*sctx), client(*cctx, "rtmp.test");
  std::vector<uint8_t> at_client, at_server;
  // Written before the handshake: kept and sent once it is done.
  std::vector<uint8_t> early_out;
  REQUIRE(client.write(pattern(1000), early_out).ok());
  CHECK(early_out.empty());
  auto r = pump(client, server, at_client, at_server);
  REQUIRE_MESSAGE(r.ok(), r.error().message());
  CHECK(client.handshake_done());
  CHECK(server.handshake_done());
  CHECK(server.server_name() == "rtmp.test");
  CHECK(client.protocol().starts_with("TLSv1."));
  CHECK(at_server == pattern(1000));

  // A flush batch of 256 KiB: records of up to 16 KiB, so about 17 bytes of overhead per 16 KiB.
  const std::vector<uint8_t> batch = pattern(256 * 1024);
  std::vector<uint8_t> cipher;
  REQUIRE(server.write(batch, cipher).ok());
  CHECK(cipher.size() < batch.size() + 16 * 40);
  std::vector<uint8_t> plain;
  // Fed in odd pieces, as reads split it.
  for (size_t at = 0; at < cipher.size(); at += 7777) {
    const size_t n = std::min<size_t>(7777, cipher.size() - at);
    REQUIRE(client.feed(std::span<const uint8_t>(cipher.data() + at, n), plain).ok());
  }
  CHECK(plain == batch);

  // close_notify ends the session cleanly.
  server.shutdown();
  std::vector<uint8_t> bye, none;
  server.take_output(bye);
  auto closed = client.feed(bye, none);
  REQUIRE_FALSE(closed.ok());
  CHECK(closed.error().code == Errc::Closed);
}

TEST_CASE("SNI chooses the certificate; a wildcard matches one label") {
  REQUIRE(certs().ok);
  auto sctx = TlsContext::server({{certs().cert, certs().key}, {certs().other_cert, certs().other_key}});
  REQUIRE_MESSAGE(sctx.ok(), sctx.error().message());
  auto cctx = TlsContext::client(false);
  REQUIRE(cctx.ok());
  for (const auto& [name, subject] : std::vector<std::pair<std::string, std::string>>{
           {"other.test", "/CN=other.test"}, {"rtmp.test", "/CN=rtmp.test"}, {"cam.live.test", "/CN=rtmp.test"},
           {"unknown.test", "/CN=rtmp.test"}}) {
    CAPTURE(name);
    TlsTransform server(*sctx), client(*cctx, name);
    std::vector<uint8_t> a, b;
    REQUIRE(pump(client, server, a, b).ok());
    CHECK(client.peer_subject() == subject);
  }
}

TEST_CASE("verification refuses a wrong host name and an unknown issuer") {
  REQUIRE(certs().ok);
  auto sctx = TlsContext::server({{certs().cert, certs().key}});
  auto other = TlsContext::server({{certs().other_cert, certs().other_key}});
  auto cctx = TlsContext::client(true, certs().ca);
  REQUIRE((sctx.ok() && other.ok() && cctx.ok()));
  {
    TlsTransform server(*sctx), client(*cctx, "wrong.test");
    std::vector<uint8_t> a, b;
    auto r = pump(client, server, a, b);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == Errc::Rejected);
    CHECK(r.error().message().find("verify") != std::string::npos);
  }
  {
    TlsTransform server(*other), client(*cctx, "other.test");
    std::vector<uint8_t> a, b;
    auto r = pump(client, server, a, b);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == Errc::Rejected);
  }
}

TEST_CASE("what is not TLS is an error for that connection") {
  REQUIRE(certs().ok);
  auto sctx = TlsContext::server({{certs().cert, certs().key}});
  REQUIRE(sctx.ok());
  // A plain RTMP client's C0+C1 on the TLS port.
  TlsTransform server(*sctx);
  std::vector<uint8_t> c0c1(1537, 0);
  c0c1[0] = 3;
  std::vector<uint8_t> plain;
  auto r = server.feed(c0c1, plain);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == Errc::Malformed);
  CHECK(plain.empty());
  // After an error every call fails the same way, nothing is produced.
  CHECK_FALSE(server.feed(c0c1, plain).ok());
  std::vector<uint8_t> out;
  CHECK_FALSE(server.write(pattern(10), out).ok());
}

TEST_CASE("bad certificate files are configuration errors that name the file") {
  REQUIRE(certs().ok);
  auto missing = TlsContext::server({{"/nonexistent/cert.pem", certs().key}});
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().code == Errc::Config);
  CHECK(missing.error().message().find("/nonexistent/cert.pem") != std::string::npos);
  auto mismatch = TlsContext::server({{certs().cert, certs().other_key}});
  REQUIRE_FALSE(mismatch.ok());
  CHECK(mismatch.error().message().find("key") != std::string::npos);
  CHECK_FALSE(TlsContext::server({}).ok());
}
