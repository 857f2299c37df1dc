// WriteRing: batched nonblocking sendmsg through io_uring, results delivered by submit().
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "server/io/write_ring.hpp"

using sluice::server::RingWriteTarget;
using sluice::server::WriteRing;

namespace {

struct Pair {
  int writer = -1;
  int reader = -1;
  Pair() {
    int fds[2];
    REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0);
    writer = fds[0];
    reader = fds[1];
    fcntl(writer, F_SETFL, fcntl(writer, F_GETFL) | O_NONBLOCK);
    fcntl(reader, F_SETFL, fcntl(reader, F_GETFL) | O_NONBLOCK);
  }
  ~Pair() {
    if (writer >= 0) ::close(writer);
    if (reader >= 0) ::close(reader);
  }
  std::string read_all() const {
    std::string out;
    char buf[65536];
    for (;;) {
      ssize_t n = ::read(reader, buf, sizeof buf);
      if (n <= 0) break;
      out.append(buf, static_cast<size_t>(n));
    }
    return out;
  }
};

struct Recorder final : RingWriteTarget {
  std::vector<int> results;
  void on_ring_write(int result) override { results.push_back(result); }
};

uv_buf_t buf_of(std::string& s) { return uv_buf_init(s.data(), static_cast<unsigned>(s.size())); }

// The machines Sluice is tested on allow io_uring: a refusal is a failure, with the kernel's reason.
void open_ring(WriteRing& ring, unsigned entries) {
  std::string why;
  REQUIRE_MESSAGE(ring.open(entries, why), "io_uring_setup refused: " << why);
}

// Writes to `count` socket pairs, one message each (made by `message(i)`), with their targets.
struct Writes {
  std::vector<Pair> pairs;
  std::vector<std::string> data;
  std::vector<uv_buf_t> bufs;
  std::vector<Recorder> targets;
  template <typename Message>
  Writes(size_t count, Message message) : pairs(count), targets(count) {
    data.reserve(count);  // bufs point into data: no reallocation
    for (size_t i = 0; i < count; ++i) data.push_back(message(i));
    for (auto& d : data) bufs.push_back(buf_of(d));
  }
  std::span<const uv_buf_t> buf(size_t i) const { return {&bufs[i], 1}; }
};

}  // namespace

TEST_CASE("writes to several sockets go out with one submit, each gathered in order") {
  WriteRing ring;
  open_ring(ring, 64);
  std::vector<Pair> pairs(3);
  std::vector<std::vector<std::string>> parts = {
      {"head-0|", "body of the first|", "tail"}, {"x"}, {std::string(100000, 'm'), "|end"}};
  std::vector<std::vector<uv_buf_t>> bufs(3);
  std::vector<Recorder> targets(3);
  for (size_t i = 0; i < 3; ++i) {
    for (auto& p : parts[i]) bufs[i].push_back(buf_of(p));
    CHECK(ring.queue(pairs[i].writer, bufs[i], &targets[i]));
  }
  CHECK(ring.queued() == 3);
  ring.submit();
  CHECK(ring.queued() == 0);
  CHECK(ring.submits() == 1);
  CHECK(ring.writes() == 3);
  for (size_t i = 0; i < 3; ++i) {
    std::string expected;
    for (auto& p : parts[i]) expected += p;
    REQUIRE(targets[i].results.size() == 1);
    int written = targets[i].results[0];
    CHECK(written > 0);
    std::string got = pairs[i].read_all();
    // A unix socket may take less than 100 KB at once: what it took is a prefix, and is reported.
    CHECK(got.size() == static_cast<size_t>(written));
    CHECK(expected.compare(0, got.size(), got) == 0);
    if (i < 2) CHECK(got == expected);
  }
}

TEST_CASE("a full socket reports EAGAIN at once instead of waiting for room") {
  WriteRing ring;
  open_ring(ring, 8);
  Pair full;
  std::string chunk(65536, 'f');
  while (::write(full.writer, chunk.data(), chunk.size()) > 0) {
  }
  Pair fine;
  std::string hello = "hello";
  uv_buf_t b1 = buf_of(chunk);
  uv_buf_t b2 = buf_of(hello);
  Recorder blocked, ok;
  REQUIRE(ring.queue(full.writer, {&b1, 1}, &blocked));
  REQUIRE(ring.queue(fine.writer, {&b2, 1}, &ok));
  auto t0 = std::chrono::steady_clock::now();
  ring.submit();
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
  CHECK(ms < 500);
  REQUIRE(blocked.results.size() == 1);
  CHECK(blocked.results[0] == UV_EAGAIN);
  REQUIRE(ok.results.size() == 1);
  CHECK(ok.results[0] == 5);
  CHECK(fine.read_all() == "hello");
}

TEST_CASE("errors are per write: a closed peer and a bad descriptor fail alone") {
  WriteRing ring;
  open_ring(ring, 8);
  Pair gone, closed_fd, fine;
  ::close(gone.reader);
  gone.reader = -1;
  ::close(closed_fd.writer);
  int bad_fd = closed_fd.writer;
  closed_fd.writer = -1;
  std::string data = "payload";
  uv_buf_t b = buf_of(data);
  Recorder r_gone, r_bad, r_fine;
  REQUIRE(ring.queue(gone.writer, {&b, 1}, &r_gone));
  REQUIRE(ring.queue(bad_fd, {&b, 1}, &r_bad));
  REQUIRE(ring.queue(fine.writer, {&b, 1}, &r_fine));
  ring.submit();
  REQUIRE(r_gone.results.size() == 1);
  CHECK(r_gone.results[0] == UV_EPIPE);
  REQUIRE(r_bad.results.size() == 1);
  CHECK(r_bad.results[0] == UV_EBADF);
  REQUIRE(r_fine.results.size() == 1);
  CHECK(r_fine.results[0] == static_cast<int>(data.size()));
  CHECK(fine.read_all() == data);
}

TEST_CASE("more writes than ring entries: the ring submits when full and loses none") {
  WriteRing ring;
  open_ring(ring, 4);
  constexpr size_t kWrites = 11;
  Writes w(kWrites, [](size_t i) { return "message " + std::to_string(i); });
  for (size_t i = 0; i < kWrites; ++i) REQUIRE(ring.queue(w.pairs[i].writer, w.buf(i), &w.targets[i]));
  ring.submit();
  CHECK(ring.writes() == kWrites);
  CHECK(ring.submits() >= 3);
  for (size_t i = 0; i < kWrites; ++i) {
    REQUIRE(w.targets[i].results.size() == 1);
    CHECK(w.targets[i].results[0] == static_cast<int>(w.data[i].size()));
    CHECK(w.pairs[i].read_all() == w.data[i]);
  }
}

TEST_CASE("writes of buffers made for them are submitted every submit_bytes; shared slices are not counted") {
  WriteRing ring;
  open_ring(ring, 64);
  ring.set_submit_bytes(1000);
  constexpr size_t kWrites = 6;
  Writes w(kWrites, [](size_t i) { return std::string(400, static_cast<char>('a' + i)); });
  // Shared slices first: 6 x 400 bytes stay queued together (one submit).
  for (size_t i = 0; i < kWrites; ++i) REQUIRE(ring.queue(w.pairs[i].writer, w.buf(i), &w.targets[i]));
  CHECK(ring.queued() == kWrites);
  ring.submit();
  CHECK(ring.submits() == 1);
  // Made for the write: the third 400-byte write would pass 1000, so the first two go out first.
  for (size_t i = 0; i < kWrites; ++i) {
    REQUIRE(ring.queue(w.pairs[i].writer, w.buf(i), &w.targets[i], /*made_for_it=*/true));
    if (i == 1) CHECK(w.targets[0].results.size() == 1);  // not yet submitted
  }
  CHECK(ring.submits() == 3);  // before writes 2 and 4 were queued, the two before each went out
  CHECK(w.targets[3].results.size() == 2);
  CHECK(w.targets[4].results.size() == 1);
  ring.submit();
  CHECK(ring.submits() == 4);
  for (size_t i = 0; i < kWrites; ++i) {
    REQUIRE(w.targets[i].results.size() == 2);
    CHECK(w.targets[i].results[1] == 400);
    CHECK(w.pairs[i].read_all() == w.data[i] + w.data[i]);
  }
}

TEST_CASE("a target may queue its next write from its result; it goes out with the next submit") {
  WriteRing ring;
  open_ring(ring, 4);
  Pair pair;
  std::string first = "first|", second = "second";
  uv_buf_t b1 = buf_of(first), b2 = buf_of(second);
  struct Chained : RingWriteTarget {
    WriteRing* ring = nullptr;
    int fd = -1;
    uv_buf_t* next = nullptr;
    std::vector<int> results;
    void on_ring_write(int result) override {
      results.push_back(result);
      if (next != nullptr) {
        uv_buf_t* b = next;
        next = nullptr;
        REQUIRE(ring->queue(fd, {b, 1}, this));
      }
    }
  } target;
  target.ring = &ring;
  target.fd = pair.writer;
  target.next = &b2;
  REQUIRE(ring.queue(pair.writer, {&b1, 1}, &target));
  ring.submit();
  CHECK(target.results.size() == 1);
  CHECK(ring.queued() == 1);
  ring.submit();
  REQUIRE(target.results.size() == 2);
  CHECK(target.results[1] == static_cast<int>(second.size()));
  CHECK(pair.read_all() == first + second);
}

TEST_CASE("a batch of more pieces than sendmsg takes is written in part, not failed") {
  WriteRing ring;
  open_ring(ring, 4);
  Pair pair;
  std::string bytes(3000, 'p');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>('a' + i % 26);
  std::vector<uv_buf_t> pieces;
  for (size_t i = 0; i < bytes.size(); ++i) pieces.push_back(uv_buf_init(&bytes[i], 1));
  Recorder r;
  REQUIRE(ring.queue(pair.writer, pieces, &r));
  ring.submit();
  REQUIRE(r.results.size() == 1);
  CHECK(r.results[0] == IOV_MAX);
  CHECK(pair.read_all() == bytes.substr(0, IOV_MAX));
}

TEST_CASE("a ring that is not open queues nothing") {
  WriteRing ring;
  Pair pair;
  std::string data = "x";
  uv_buf_t b = buf_of(data);
  Recorder r;
  CHECK_FALSE(ring.is_open());
  CHECK_FALSE(ring.queue(pair.writer, {&b, 1}, &r));
  ring.submit();
  CHECK(r.results.empty());
}
