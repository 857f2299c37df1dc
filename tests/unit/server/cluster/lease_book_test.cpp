// LeaseBook: claims, refreshes every third of the lease, a lost claim, Redis unreachable, release.
#include <doctest/doctest.h>

#include "server/cluster/lease_book.hpp"

using namespace sluice::server::cluster;
using namespace std::chrono_literals;

TEST_CASE("a claim is SET NX PX with this node's value; OK makes it ours") {
  LeaseBook book("edge-1", 42, 9000ms);
  CHECK(book.value() == "edge-1 42");
  auto c = book.claim("live/cam");
  CHECK(c.argv == std::vector<std::string>{"SET", "sluice:stream:live/cam", "edge-1 42", "NX", "PX", "9000"});
  CHECK(book.on_claim_reply("live/cam", std::string("OK"), 1000) == ClaimResult::Owned);
  CHECK(book.owns("live/cam"));
  CHECK(book.owned() == std::vector<std::string>{"live/cam"});
}

TEST_CASE("a taken name and an unreachable registry are not ours") {
  LeaseBook book("a", 1, 10000ms);
  CHECK(book.on_claim_reply("live/x", std::string("nil"), 0) == ClaimResult::OwnedByOther);
  CHECK(book.on_claim_reply("live/y", std::nullopt, 0) == ClaimResult::Unreachable);
  CHECK(book.owned_count() == 0);
  CHECK(LeaseBook::owner_of("origin-b 77") == "origin-b");
}

TEST_CASE("refreshes come every third of the lease, one in flight at a time") {
  LeaseBook book("a", 1, 9000ms);
  book.on_claim_reply("live/cam", std::string("OK"), 0);
  CHECK(book.due_refreshes(2999).empty());
  auto due = book.due_refreshes(3000);
  REQUIRE(due.size() == 1);
  CHECK(due[0].first == "live/cam");
  CHECK(due[0].second.argv[0] == "EVAL");
  CHECK(due[0].second.argv[3] == "sluice:stream:live/cam");
  CHECK(due[0].second.argv[4] == "a 1");
  CHECK(due[0].second.argv[5] == "9000");
  CHECK(book.due_refreshes(5000).empty());  // still waiting for the answer
  CHECK_FALSE(book.on_refresh_reply("live/cam", 1, 3010));
  CHECK(book.due_refreshes(6009).empty());
  CHECK(book.due_refreshes(6010).size() == 1);
}

TEST_CASE("Redis unreachable keeps the stream and retries within a second") {
  LeaseBook book("a", 1, 30000ms);
  book.on_claim_reply("live/cam", std::string("OK"), 0);
  REQUIRE(book.due_refreshes(10000).size() == 1);
  CHECK_FALSE(book.on_refresh_reply("live/cam", std::nullopt, 10000));
  CHECK(book.owns("live/cam"));
  CHECK(book.due_refreshes(10999).empty());
  CHECK(book.due_refreshes(11000).size() == 1);
}

TEST_CASE("a refresh that finds another node's value loses the stream") {
  LeaseBook book("a", 1, 3000ms);
  book.on_claim_reply("live/cam", std::string("OK"), 0);
  REQUIRE(book.due_refreshes(1000).size() == 1);
  CHECK(book.on_refresh_reply("live/cam", 0, 1000));
  CHECK_FALSE(book.owns("live/cam"));
  CHECK(book.due_refreshes(100000).empty());
}

TEST_CASE("draining marks every claim; another node may take a marked one") {
  LeaseBook book("a", 1, 3000ms);
  book.on_claim_reply("live/cam", std::string("OK"), 0);
  book.on_claim_reply("live/two", std::string("OK"), 0);
  auto marks = book.start_draining();
  REQUIRE(marks.size() == 2);
  CHECK(marks[0].argv[0] == "EVAL");
  CHECK(marks[0].argv[4] == "a 1");  // swapped only while it is still ours
  CHECK(marks[0].argv[5] == "a 1 draining");
  CHECK(book.start_draining().empty());  // once
  CHECK(book.value() == "a 1 draining");
  CHECK(LeaseBook::is_draining_value(book.value()));
  CHECK_FALSE(LeaseBook::is_draining_value("a 1"));
  CHECK(LeaseBook::owner_of(book.value()) == "a");
  // Refreshes and releases now carry the marked value.
  auto due = book.due_refreshes(1000);
  REQUIRE(due.size() == 2);
  CHECK(due[0].second.argv[4] == "a 1 draining");
  // Node b takes the marked claim with its own value.
  LeaseBook b("b", 7, 3000ms);
  auto t = b.take_over("live/cam", "a 1 draining");
  CHECK(t.argv[3] == "sluice:stream:live/cam");
  CHECK(t.argv[4] == "a 1 draining");
  CHECK(t.argv[5] == "b 7");
  CHECK(t.argv[6] == "3000");
}

TEST_CASE("release deletes only our own claim, once") {
  LeaseBook book("a", 1, 3000ms);
  book.on_claim_reply("live/cam", std::string("OK"), 0);
  auto r = book.release("live/cam");
  REQUIRE(r);
  CHECK(r->argv[0] == "EVAL");
  CHECK(r->argv[3] == "sluice:stream:live/cam");
  CHECK(r->argv[4] == "a 1");
  CHECK_FALSE(book.release("live/cam"));
  CHECK_FALSE(book.on_refresh_reply("live/cam", 0, 10));  // an answer after the release changes nothing
}

TEST_CASE("a take announced by another node is checked at once, even behind a refresh in flight") {
  LeaseBook book("a", 1, 30000ms);
  book.on_claim_reply("live/cam", std::string("OK"), 0);
  CHECK_FALSE(book.refresh_now("live/other"));  // not ours: nothing to check
  auto now = book.refresh_now("live/cam");
  REQUIRE(now);
  CHECK(book.due_refreshes(20000).empty());  // in flight: not sent twice
  CHECK(now->argv[0] == "EVAL");
  CHECK(now->argv[4] == "a 1");
  CHECK(book.on_refresh_reply("live/cam", 0, 10));  // the take is real: lost
  CHECK_FALSE(book.owns("live/cam"));

  // A refresh already in flight may have been answered before the take: another follows its answer.
  book.on_claim_reply("live/two", std::string("OK"), 0);
  REQUIRE(book.due_refreshes(10000).size() == 1);
  CHECK_FALSE(book.refresh_now("live/two"));
  CHECK_FALSE(book.on_refresh_reply("live/two", 1, 10002));
  CHECK(book.due_refreshes(10002).size() == 1);  // at once, not a third of the lease later
  CHECK_FALSE(book.on_refresh_reply("live/two", 1, 10003));
  CHECK(book.due_refreshes(19999).empty());  // then the usual period again
  CHECK(book.due_refreshes(20003).size() == 1);
}

TEST_CASE("a publisher replacing another node's takes its plain claim with the same swap") {
  LeaseBook b("b", 2, 3000ms);
  auto take = b.take_over("live/cam", "a 1");
  CHECK(take.argv[0] == "EVAL");
  CHECK(take.argv[3] == "sluice:stream:live/cam");
  CHECK(take.argv[4] == "a 1");  // only while a still holds what b saw
  CHECK(take.argv[5] == "b 2");
  CHECK(take.argv[6] == "3000");
}
