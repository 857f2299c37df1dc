// server/io/tls_transform.hpp and tls_context.hpp: a client and a server transform talking to each
// other in memory, with certificates made by the openssl command line: the bytes go through
// unchanged, big writes make few records, SNI picks the certificate, verification refuses a
// wrong name or an unknown issuer, and what is not TLS is an error, never a crash.
#include <doctest/doctest.h>
#include <openssl/ssl.h>

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
         sluice::test::run("printf 'subjectAltName=DNS:rtmp.test,DNS:*.live.test' > " + d +
                           "/san.ext && openssl x509 -req -in " + d + "/rtmp.csr -CA " + ca + " -CAkey " + d +
                           "/ca.key -CAcreateserial -days 2 -extfile " + d + "/san.ext -out " + cert + q)
             .has_value() &&
         sluice::test::run(
             "openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=other.test -addext "
             "subjectAltName=DNS:other.test -keyout " +
             other_key + " -out " + other_cert + q)
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
    ByteBuffer c2s, s2c;
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

// The server's close_notify reaches the client as a clean end of the session.
// A client context (no verification) that offers only the TLS 1.3 `suite`.
std::shared_ptr<TlsContext> client_with_suite(const char* suite) {
  auto cctx = TlsContext::client(false);
  REQUIRE(cctx.ok());
  REQUIRE(SSL_CTX_set_ciphersuites((*cctx)->get(), suite) == 1);
  return *cctx;
}

void check_close_notify(TlsTransform& server, TlsTransform& client) {
  server.shutdown();
  ByteBuffer bye;
  std::vector<uint8_t> none;
  server.take_output(bye);
  auto closed = client.feed(bye, none);
  REQUIRE_FALSE(closed.ok());
  CHECK(closed.error().code == Errc::Closed);
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
  ByteBuffer early_out;
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
  ByteBuffer cipher;
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
  check_close_notify(server, client);
}

// Sluice's own records (TlsRecordSealer) read by OpenSSL on the other side: for each TLS 1.3
// suite, batches of pieces (empty ones, more than one record, a record boundary inside a piece),
// a KeyUpdate the client asks for, and close_notify.
TEST_CASE("over TLS 1.3 Sluice seals the records and OpenSSL reads them") {
  REQUIRE(certs().ok);
  auto sctx = TlsContext::server({{certs().cert, certs().key}});
  REQUIRE(sctx.ok());
  for (const char* suite : {"TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256"}) {
    CAPTURE(suite);
    TlsTransform server(*sctx), client(client_with_suite(suite), "rtmp.test");
    std::vector<uint8_t> at_client, at_server;
    REQUIRE(pump(client, server, at_client, at_server).ok());
    REQUIRE(server.protocol() == "TLSv1.3");
    CHECK(std::string(SSL_CIPHER_get_name(SSL_get_current_cipher(server.native_handle()))) == suite);

    // The first write is OpenSSL's (the probe); Sluice seals from the second on.
    ByteBuffer cipher;
    std::vector<uint8_t> plain;
    REQUIRE(server.write(pattern(3000), cipher).ok());
    CHECK(server.seals_own_records());
    const std::vector<uint8_t> a = pattern(40000), b = pattern(5);
    const std::span<const uint8_t> pieces[] = {{}, std::span(a).first(20000), {}, b, std::span(a).subspan(20000)};
    REQUIRE(server.write(std::span<const std::span<const uint8_t>>(pieces), cipher).ok());
    // 3000 + 40005 bytes in 1 + 3 records of 22 bytes of overhead each.
    CHECK(cipher.size() == 3000 + 40005 + 4 * TlsRecordSealer::kOverhead);
    REQUIRE(client.feed(cipher, plain).ok());
    std::vector<uint8_t> expected = pattern(3000);
    expected.insert(expected.end(), a.begin(), a.begin() + 20000);
    expected.insert(expected.end(), b.begin(), b.end());
    expected.insert(expected.end(), a.begin() + 20000, a.end());
    CHECK(plain == expected);

    // The client asks for a key update (it goes with its next record): the server answers it with
    // its own KeyUpdate, then its records are under the new key.
    REQUIRE(SSL_key_update(client.native_handle(), SSL_KEY_UPDATE_REQUESTED) == 1);
    ByteBuffer c2s;
    REQUIRE(client.write(pattern(10), c2s).ok());
    at_server.clear();
    REQUIRE(server.feed(c2s, at_server).ok());
    CHECK(at_server == pattern(10));
    cipher.clear();
    server.take_output(cipher);  // the KeyUpdate, 5 bytes sealed
    CHECK(cipher.size() == 5 + TlsRecordSealer::kOverhead);
    REQUIRE(server.write(pattern(70000), cipher).ok());
    plain.clear();
    auto r = client.feed(cipher, plain);
    REQUIRE_MESSAGE(r.ok(), r.error().message());
    CHECK(plain == pattern(70000));

    // After records_per_key records the server updates its key on its own (a KeyUpdate first).
    server.set_records_per_key(3);
    cipher.clear();
    for (int i = 0; i < 4; ++i) REQUIRE(server.write(pattern(100), cipher).ok());
    // The 70000 bytes took 5 records under the current key, so: update, 3 records, update, 1 record.
    CHECK(cipher.size() == 4 * (100 + TlsRecordSealer::kOverhead) + 2 * (5 + TlsRecordSealer::kOverhead));
    plain.clear();
    r = client.feed(cipher, plain);
    REQUIRE_MESSAGE(r.ok(), r.error().message());
    const std::vector<uint8_t> hundred = pattern(100);
    std::vector<uint8_t> four;
    for (int i = 0; i < 4; ++i) four.insert(four.end(), hundred.begin(), hundred.end());
    CHECK(plain == four);

    check_close_notify(server, client);
    ByteBuffer after;
    CHECK_FALSE(server.write(pattern(10), after).ok());
    CHECK(after.empty());
  }
}

// A client that asks for a KeyUpdate before the server's first write: OpenSSL answers it with that
// write, whose data is then under the next secret. Sluice still takes the records over (it used
// to leave such a connection on OpenSSL's records for its whole life), once or after two updates.
TEST_CASE("a KeyUpdate asked for before the first write does not keep OpenSSL's records") {
  REQUIRE(certs().ok);
  auto sctx = TlsContext::server({{certs().cert, certs().key}});
  REQUIRE(sctx.ok());
  for (const char* suite : {"TLS_AES_128_GCM_SHA256", "TLS_CHACHA20_POLY1305_SHA256"}) {
    for (int asks = 1; asks <= 2; ++asks) {
      const std::string suite_name = suite;
      CAPTURE(suite_name);
      CAPTURE(asks);
      TlsTransform server(*sctx), client(client_with_suite(suite), "rtmp.test");
      std::vector<uint8_t> at_client, at_server;
      REQUIRE(pump(client, server, at_client, at_server).ok());
      ByteBuffer c2s;
      for (int i = 0; i < asks; ++i) {
        REQUIRE(SSL_key_update(client.native_handle(), SSL_KEY_UPDATE_REQUESTED) == 1);
        REQUIRE(client.write(pattern(10), c2s).ok());
      }
      REQUIRE(server.feed(c2s, at_server).ok());
      ByteBuffer cipher;
      server.take_output(cipher);
      REQUIRE(server.write(pattern(30000), cipher).ok());
      CHECK(server.seals_own_records());
      REQUIRE(server.write(pattern(20000), cipher).ok());
      std::vector<uint8_t> plain;
      auto r = client.feed(cipher, plain);
      REQUIRE_MESSAGE(r.ok(), r.error().message());
      std::vector<uint8_t> expected = pattern(30000);
      const std::vector<uint8_t> more = pattern(20000);
      expected.insert(expected.end(), more.begin(), more.end());
      CHECK(plain == expected);
      check_close_notify(server, client);
    }
  }
}

TEST_CASE("OpenSSL keeps the records over TLS 1.2 and when the context says so") {
  REQUIRE(certs().ok);
  auto own = TlsContext::server({{certs().cert, certs().key}});
  auto openssl = TlsContext::server({{certs().cert, certs().key}}, false);
  REQUIRE((own.ok() && openssl.ok()));
  for (int tls12 = 0; tls12 < 2; ++tls12) {
    auto cctx = TlsContext::client(false);
    REQUIRE(cctx.ok());
    if (tls12) SSL_CTX_set_max_proto_version((*cctx)->get(), TLS1_2_VERSION);
    TlsTransform server(tls12 ? *own : *openssl), client(*cctx, "rtmp.test");
    std::vector<uint8_t> a, b;
    REQUIRE(pump(client, server, a, b).ok());
    CHECK(server.protocol() == (tls12 ? "TLSv1.2" : "TLSv1.3"));
    ByteBuffer cipher;
    std::vector<uint8_t> plain;
    for (int i = 0; i < 2; ++i) REQUIRE(server.write(pattern(20000), cipher).ok());
    CHECK_FALSE(server.seals_own_records());
    REQUIRE(client.feed(cipher, plain).ok());
    const std::vector<uint8_t> once = pattern(20000);
    std::vector<uint8_t> twice = once;
    twice.insert(twice.end(), once.begin(), once.end());
    CHECK(plain == twice);
  }
}

TEST_CASE("SNI chooses the certificate; a wildcard matches one label") {
  REQUIRE(certs().ok);
  auto sctx = TlsContext::server({{certs().cert, certs().key}, {certs().other_cert, certs().other_key}});
  REQUIRE_MESSAGE(sctx.ok(), sctx.error().message());
  auto cctx = TlsContext::client(false);
  REQUIRE(cctx.ok());
  for (const auto& names : std::vector<std::pair<std::string, std::string>>{{"other.test", "/CN=other.test"},
                                                                            {"rtmp.test", "/CN=rtmp.test"},
                                                                            {"cam.live.test", "/CN=rtmp.test"},
                                                                            {"unknown.test", "/CN=rtmp.test"}}) {
    // Not a structured binding: clang 14 cannot capture one in CAPTURE's lambda.
    const std::string& name = names.first;
    const std::string& subject = names.second;
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
  ByteBuffer out;
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
