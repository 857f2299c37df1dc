#include "server/webrtc/udp_port.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <vector>

using namespace sluice::server;

namespace {

struct Received {
  std::vector<std::vector<uint8_t>> datagrams;
};

std::vector<uint8_t> datagram(int i, size_t size = 1200) {
  std::vector<uint8_t> d(size);
  for (size_t k = 0; k < size; ++k) d[k] = static_cast<uint8_t>(i * 7 + k);
  return d;
}

UdpPeer peer_at(uint16_t port) {
  sockaddr_in a{};
  uv_ip4_addr("127.0.0.1", port, &a);
  return UdpPeer::from(reinterpret_cast<const sockaddr*>(&a));
}

// Runs the loop until `done` or about 2 s of turns.
template <typename Done>
void run_until(uv_loop_t* loop, Done done) {
  for (int i = 0; i < 2000 && !done(); ++i) {
    uv_run(loop, UV_RUN_NOWAIT);
    if (!done()) uv_sleep(1);
  }
}

}  // namespace

// Sends are queued and go out in sendmmsg batches: 150 datagrams to one port in 3 calls (64, 64,
// 22), every one arriving whole and in order; and a queue that is not full goes out within the
// loop turn (the port's prepare and check handles), not only when it fills.
TEST_CASE("datagrams go out in batches, in order, within the loop turn") {
  uv_loop_t loop;
  uv_loop_init(&loop);
  Received got;
  UdpPort receiver(&loop,
                   [&](std::span<const uint8_t> d, const UdpPeer&) { got.datagrams.emplace_back(d.begin(), d.end()); });
  UdpPort sender(&loop, [](std::span<const uint8_t>, const UdpPeer&) {});
  auto rport = receiver.open("127.0.0.1", 0);
  auto sport = sender.open("127.0.0.1", 0);
  REQUIRE(rport.ok());
  REQUIRE(sport.ok());
  const UdpPeer to = peer_at(*rport);

  for (int i = 0; i < 150; ++i) REQUIRE(sender.send(datagram(i), to));
  CHECK(sender.send_calls() == 2);  // two full batches went at once; 22 wait for the loop
  run_until(&loop, [&] { return got.datagrams.size() == 150; });
  CHECK(sender.send_calls() == 3);
  REQUIRE(got.datagrams.size() == 150);
  for (int i = 0; i < 150; ++i) CHECK(got.datagrams[static_cast<size_t>(i)] == datagram(i));
  CHECK(sender.datagrams_out() == 150);
  CHECK(sender.send_drops() == 0);

  // Five, then one turn of the loop: they are out.
  got.datagrams.clear();
  for (int i = 0; i < 5; ++i) REQUIRE(sender.send(datagram(i, 100), to));
  uv_run(&loop, UV_RUN_NOWAIT);
  run_until(&loop, [&] { return got.datagrams.size() == 5; });
  CHECK(got.datagrams.size() == 5);
  CHECK(sender.send_calls() == 4);

  // Larger than a datagram may be here: refused and counted, nothing queued.
  CHECK_FALSE(sender.send(datagram(0, UdpPort::kMaxDatagram + 1), to));
  CHECK(sender.send_drops() == 1);

  receiver.close();
  sender.close();
  uv_run(&loop, UV_RUN_DEFAULT);  // the handles' closes
  CHECK(uv_loop_close(&loop) == 0);
}

// UDP GSO: a run of datagrams to one peer, all of the first one's size but a shorter last, goes as
// one message the kernel cuts into the same datagrams; a longer one, another peer or a datagram
// after a shorter one starts the next message. The receiver gets every datagram whole, in order.
TEST_CASE("runs of equal datagrams to one peer go as one GSO message, and arrive as they were sent") {
  uv_loop_t loop;
  uv_loop_init(&loop);
  Received a, b;
  UdpPort ra(&loop, [&](std::span<const uint8_t> d, const UdpPeer&) { a.datagrams.emplace_back(d.begin(), d.end()); });
  UdpPort rb(&loop, [&](std::span<const uint8_t> d, const UdpPeer&) { b.datagrams.emplace_back(d.begin(), d.end()); });
  UdpPort sender(&loop, [](std::span<const uint8_t>, const UdpPeer&) {});
  auto pa = ra.open("127.0.0.1", 0);
  auto pb = rb.open("127.0.0.1", 0);
  REQUIRE(pa.ok());
  REQUIRE(pb.ok());
  REQUIRE(sender.open("127.0.0.1", 0).ok());
  REQUIRE(sender.gso());
  struct Send {
    bool to_a;
    size_t size;
  };
  // Messages: [a 1200 x3, 900] [a 1200] [b 1200 x2] [a 1200, 1200] [a 1300] [b 500]
  const std::vector<Send> sends = {{true, 1200},  {true, 1200}, {true, 1200}, {true, 900},  {true, 1200}, {false, 1200},
                                   {false, 1200}, {true, 1200}, {true, 1200}, {true, 1300}, {false, 500}};
  std::vector<std::vector<uint8_t>> want_a, want_b;
  for (size_t i = 0; i < sends.size(); ++i) {
    const auto d = datagram(static_cast<int>(i), sends[i].size);
    REQUIRE(sender.send(d, peer_at(sends[i].to_a ? *pa : *pb)));
    (sends[i].to_a ? want_a : want_b).push_back(d);
  }
  sender.flush();
  CHECK(sender.send_calls() == 1);
  CHECK(sender.gso_messages() == 3);
  CHECK(sender.datagrams_out() == sends.size());
  run_until(&loop, [&] { return a.datagrams.size() == want_a.size() && b.datagrams.size() == want_b.size(); });
  CHECK(a.datagrams == want_a);
  CHECK(b.datagrams == want_b);

  // More than a GSO message may carry: 60 datagrams of 1200 to one peer are two messages.
  a.datagrams.clear();
  want_a.clear();
  for (int i = 0; i < 60; ++i) {
    want_a.push_back(datagram(i));
    REQUIRE(sender.send(want_a.back(), peer_at(*pa)));
  }
  sender.flush();
  CHECK(sender.gso_messages() == 3 + 2);
  run_until(&loop, [&] { return a.datagrams.size() == want_a.size(); });
  CHECK(a.datagrams == want_a);
  CHECK(sender.send_drops() == 0);

  ra.close();
  rb.close();
  sender.close();
  uv_run(&loop, UV_RUN_DEFAULT);
  CHECK(uv_loop_close(&loop) == 0);
}

// The comparisons' switches: SLUICE_WEBRTC_BATCH=1 sends each datagram at once, one call each;
// SLUICE_WEBRTC_GSO=0 keeps the batches but sends each datagram as a message of its own.
namespace {

struct Sent {
  uint64_t calls, gso_messages;
  size_t received;
};

Sent send_ten_with(const char* variable, const char* value) {
  uv_loop_t loop;
  uv_loop_init(&loop);
  setenv(variable, value, 1);
  UdpPort sender(&loop, [](std::span<const uint8_t>, const UdpPeer&) {});
  unsetenv(variable);
  Received got;
  UdpPort receiver(&loop,
                   [&](std::span<const uint8_t> d, const UdpPeer&) { got.datagrams.emplace_back(d.begin(), d.end()); });
  auto rport = receiver.open("127.0.0.1", 0);
  REQUIRE(rport.ok());
  REQUIRE(sender.open("127.0.0.1", 0).ok());
  for (int i = 0; i < 10; ++i) REQUIRE(sender.send(datagram(i), peer_at(*rport)));
  sender.flush();
  const Sent sent{sender.send_calls(), sender.gso_messages(), 0};
  run_until(&loop, [&] { return got.datagrams.size() == 10; });
  receiver.close();
  sender.close();
  uv_run(&loop, UV_RUN_DEFAULT);
  CHECK(uv_loop_close(&loop) == 0);
  return {sent.calls, sent.gso_messages, got.datagrams.size()};
}

}  // namespace

TEST_CASE("SLUICE_WEBRTC_BATCH=1 sends every datagram by itself; SLUICE_WEBRTC_GSO=0 sends no GSO message") {
  const Sent unbatched = send_ten_with("SLUICE_WEBRTC_BATCH", "1");
  CHECK(unbatched.calls == 10);
  CHECK(unbatched.gso_messages == 0);
  CHECK(unbatched.received == 10);
  const Sent plain = send_ten_with("SLUICE_WEBRTC_GSO", "0");
  CHECK(plain.calls == 1);
  CHECK(plain.gso_messages == 0);
  CHECK(plain.received == 10);
  const Sent gso = send_ten_with("SLUICE_WEBRTC_GSO", "1");
  CHECK(gso.calls == 1);
  CHECK(gso.gso_messages == 1);
  CHECK(gso.received == 10);
}
