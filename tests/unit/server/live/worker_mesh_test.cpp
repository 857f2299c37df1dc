// The pieces several worker loops share: the lock-free event queue, the stream directory, and
// the flush list's held (delayed) set.
#include <doctest/doctest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "server/io/flush_list.hpp"
#include "server/live/worker_mesh.hpp"

using namespace sluice;
using namespace sluice::server;

TEST_CASE("event queue: every event from every producer arrives once, each producer's in order") {
  constexpr uint32_t kProducers = 4;
  constexpr uint64_t kPerProducer = 20000;
  EventQueue q;
  std::atomic<bool> go{false};
  std::vector<std::thread> producers;
  for (uint32_t p = 0; p < kProducers; ++p) {
    producers.emplace_back([&, p] {
      while (!go.load()) std::this_thread::yield();
      for (uint64_t i = 0; i < kPerProducer; ++i) {
        auto e = std::make_unique<MeshEvent>();
        e->from = p;
        e->id = i;
        q.push(std::move(e));
      }
    });
  }
  go = true;
  std::vector<uint64_t> next(kProducers, 0);
  uint64_t received = 0;
  bool in_order = true;
  // Pops while the producers push: pop() may see nothing mid-push and must be retried.
  while (received < kProducers * kPerProducer) {
    auto e = q.pop();
    if (!e) {
      std::this_thread::yield();
      continue;
    }
    in_order &= e->id == next[e->from];
    next[e->from] = e->id + 1;
    ++received;
  }
  for (auto& t : producers) t.join();
  CHECK(in_order);
  CHECK(received == kProducers * kPerProducer);
  CHECK(q.pop() == nullptr);
}

TEST_CASE("event queue: events left at destruction are freed") {
  EventQueue q;
  for (int i = 0; i < 3; ++i) q.push(std::make_unique<MeshEvent>());
  CHECK(q.pop() != nullptr);
  // The other two go with the queue (ASan reports a leak if not).
}

TEST_CASE("stream directory: one publisher per name across workers; interest tells who wants it") {
  StreamDirectory dir(3);
  std::vector<uint32_t> interested;
  CHECK(dir.add_interest("live/a", 1) == StreamDirectory::kNoOwner);
  CHECK(dir.add_interest("live/a", 2) == StreamDirectory::kNoOwner);
  CHECK(dir.add_interest("live/a", 0) == StreamDirectory::kNoOwner);
  REQUIRE(dir.claim("live/a", 0, interested));
  CHECK(interested == std::vector<uint32_t>{1, 2});  // not the owner itself
  CHECK(dir.owner("live/a") == 0);
  CHECK_FALSE(dir.claim("live/a", 1, interested));  // someone else publishes it
  CHECK(dir.claim("live/a", 0, interested));        // the owner again (republish on its loop)
  CHECK(dir.remove_interest("live/a", 2) == 0);     // tells the leaver whom to unsubscribe from
  dir.release("live/a", 1);                         // not the owner: no effect
  CHECK(dir.owner("live/a") == 0);
  dir.release("live/a", 0);
  CHECK(dir.owner("live/a") == StreamDirectory::kNoOwner);
  REQUIRE(dir.claim("live/a", 2, interested));
  CHECK(interested == std::vector<uint32_t>{0, 1});
  dir.release("live/a", 2);
  CHECK(dir.remove_interest("live/a", 0) == StreamDirectory::kNoOwner);
  CHECK(dir.remove_interest("live/a", 1) == StreamDirectory::kNoOwner);
  CHECK(dir.owner("live/a") == StreamDirectory::kNoOwner);
  CHECK(dir.remove_interest("live/never", 1) == StreamDirectory::kNoOwner);
}

namespace {
struct FakeConn {
  bool in_flush_list = false;
  bool in_delayed_list = false;
  uint32_t hold_slot = 0;
  std::string pending_close_reason;
  int flushes = 0;
  int closes = 0;
  void flush() { ++flushes; }
  void close(const std::string&) { ++closes; }
};
}  // namespace

TEST_CASE("flush list: held connections flush only when promoted, once, and can be cancelled") {
  FlushList<FakeConn> list;
  FakeConn a, b, c;
  CHECK(list.add_delayed(&a));        // first held: the caller starts its timer
  CHECK_FALSE(list.add_delayed(&b));  // already running
  CHECK_FALSE(list.add_delayed(&a));  // already held
  list.drain();
  CHECK(a.flushes == 0);  // held, not pending
  list.add(&b);           // something urgent for b: flushes now, not again at promotion
  list.drain();
  CHECK(b.flushes == 1);
  list.add_delayed(&c);
  list.remove(&c);  // closed while held
  list.promote_delayed();
  list.drain();
  CHECK(a.flushes == 1);
  CHECK(b.flushes == 1);
  CHECK(c.flushes == 0);
  CHECK_FALSE(list.has_delayed());
  CHECK(list.add_delayed(&a));  // a new hold starts a new timer
}

TEST_CASE("flush list: lanes hold their share of the connections and are promoted one at a time") {
  FlushList<FakeConn> list;
  std::vector<FakeConn> conns(8);
  for (auto& c : conns) list.add_delayed(&c);
  list.set_lanes(4);  // what was held moves to the lanes by slot
  CHECK(list.lanes() == 4);
  CHECK(list.promote_delayed(1) == 2);
  list.drain();
  int flushed = 0;
  for (auto& c : conns) flushed += c.flushes;
  CHECK(flushed == 2);
  list.add(&conns[1]);  // flushed on its own before its lane's turn: not again with the lane
  list.drain();
  list.remove(&conns[3]);  // closed while held: its lane forgets it
  size_t promoted = 0;
  for (size_t lane = 0; lane < 4; ++lane) promoted += list.promote_delayed(lane);
  CHECK(promoted == 4);  // 8 - 2 of lane 1 - the one flushed alone - the closed one
  list.drain();
  for (size_t i = 0; i < conns.size(); ++i) CHECK(conns[i].flushes == (i == 3 ? 0 : 1));
  CHECK_FALSE(list.has_delayed());
  // A connection keeps its slot, so it comes back to the same lane.
  const uint32_t slot = conns[5].hold_slot;
  list.add_delayed(&conns[5]);
  CHECK(conns[5].hold_slot == slot);
  CHECK(list.promote_delayed(slot % 4) == 1);
}
