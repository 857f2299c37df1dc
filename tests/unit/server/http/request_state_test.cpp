// HttpRequestCycle: the request states of an HTTP connection and the limit each one has.
#include <doctest/doctest.h>

#include <optional>
#include <string>

#include "server/http/request_state.hpp"

using namespace sluice::server;

namespace {

using C = HttpRequestCycle;
constexpr uint64_t kT0 = 1'000'000;

// A cycle at its first request's Responding state (a GET without body).
HttpRequestCycle responding(uint64_t at = kT0) {
  HttpRequestCycle c(at);
  c.begin_request(at);
  c.head_complete(false, false);
  c.message_complete();
  c.dispatched();
  return c;
}

}  // namespace

TEST_CASE("a GET: idle, head, body, ready, responding, then idle again on a keep-alive connection") {
  HttpRequestCycle c(kT0);
  CHECK(c.state() == RequestState::Idle);
  CHECK(c.first_request());
  CHECK(c.parses(false));
  c.begin_request(kT0 + 5);
  CHECK(c.state() == RequestState::Head);
  c.head_complete(false, false);
  CHECK(c.state() == RequestState::Body);
  CHECK_FALSE(c.body_unread());
  c.message_complete();
  CHECK(c.state() == RequestState::Ready);
  c.dispatched();
  CHECK(c.state() == RequestState::Responding);
  CHECK_FALSE(c.parses(false));  // pipelined requests wait
  c.response_done(kT0 + 10, true);
  CHECK(c.state() == RequestState::Idle);
  CHECK_FALSE(c.first_request());
  CHECK(c.parses(false));
}

TEST_CASE("an answer the connection does not survive finishes, then lingers once written") {
  HttpRequestCycle c = responding();
  c.response_done(kT0 + 10, false);
  CHECK(c.state() == RequestState::Finishing);
  CHECK(c.drops_input());
  CHECK_FALSE(c.parses(true));
  c.begin_linger(kT0 + 20);
  CHECK(c.state() == RequestState::Lingering);
  CHECK(c.drops_input());
  // Nothing brings it back.
  c.begin_request(kT0 + 30);
  c.respond_now();
  c.finish_after_write();
  CHECK(c.state() == RequestState::Lingering);
}

TEST_CASE("an upload is answered from its head; its body arrives while it is being answered") {
  HttpRequestCycle c(kT0);
  c.begin_request(kT0);
  c.head_complete(true, true);
  CHECK(c.state() == RequestState::Ready);
  CHECK(c.body_unread());
  c.dispatched();
  CHECK(c.state() == RequestState::Responding);
  CHECK_FALSE(c.parses(false));
  CHECK(c.parses(true));  // the responder takes the body
  c.message_complete();
  CHECK(c.state() == RequestState::Responding);
  CHECK_FALSE(c.body_unread());
  c.response_done(kT0 + 10, true);
  CHECK(c.state() == RequestState::Idle);
}

TEST_CASE("an upload refused from its head cannot skip its unread body: the connection finishes") {
  HttpRequestCycle c(kT0);
  c.begin_request(kT0);
  c.head_complete(true, true);
  c.dispatched();
  c.response_done(kT0 + 1, true);
  CHECK(c.state() == RequestState::Finishing);
}

TEST_CASE("refusals on the spot: from idle, head, body and ready") {
  for (int from = 0; from < 4; ++from) {
    CAPTURE(from);
    HttpRequestCycle c(kT0);
    if (from >= 1) c.begin_request(kT0);
    if (from >= 2) c.head_complete(true, from == 3);
    c.respond_now();
    CHECK(c.state() == RequestState::Responding);
    c.response_done(kT0 + 1, false);
    CHECK(c.state() == RequestState::Finishing);
  }
}

TEST_CASE("peer gone or server stopping with output pending: no further request") {
  HttpRequestCycle idle(kT0);
  idle.finish_after_write();
  CHECK(idle.state() == RequestState::Finishing);
  HttpRequestCycle head(kT0);
  head.begin_request(kT0);
  head.finish_after_write();
  CHECK(head.state() == RequestState::Finishing);
  // A response in progress finishes on its own (response_done decides).
  HttpRequestCycle busy = responding();
  busy.finish_after_write();
  CHECK(busy.state() == RequestState::Responding);
}

TEST_CASE("out-of-order events change nothing") {
  HttpRequestCycle c(kT0);
  c.dispatched();
  c.response_done(kT0, true);
  c.begin_linger(kT0);
  c.head_complete(true, false);
  CHECK(c.state() == RequestState::Idle);
  CHECK(c.first_request());
  HttpRequestCycle r = responding();
  r.begin_request(kT0 + 1);
  r.head_complete(true, false);
  CHECK(r.state() == RequestState::Responding);
}

TEST_CASE("timeouts: each state's own limit") {
  const std::optional<uint64_t> none;
  SUBCASE("a new connection has the head limit for its first request") {
    HttpRequestCycle c(kT0);
    CHECK(c.timeout(kT0 + C::kHeaderTimeoutMs, kT0, none) == HttpTimeout::None);
    CHECK(c.timeout(kT0 + C::kHeaderTimeoutMs + 1, kT0, none) == HttpTimeout::NoRequest);
  }
  SUBCASE("an idle keep-alive connection has the keep-alive limit, from its last answer") {
    HttpRequestCycle c = responding();
    c.response_done(kT0 + 500, true);
    CHECK(c.timeout(kT0 + 500 + C::kKeepAliveTimeoutMs, kT0, none) == HttpTimeout::None);
    CHECK(c.timeout(kT0 + 501 + C::kKeepAliveTimeoutMs, kT0, none) == HttpTimeout::KeepAlive);
  }
  SUBCASE("slowloris: the head limit runs from the first byte, whatever arrives since") {
    HttpRequestCycle c(kT0);
    c.begin_request(kT0 + 100);
    uint64_t late = kT0 + 101 + C::kHeaderTimeoutMs;
    CHECK(c.timeout(late - 1, late - 1, none) == HttpTimeout::None);
    CHECK(c.timeout(late, late, none) == HttpTimeout::Head);
  }
  SUBCASE("a body to drop has the stall limit, from the last byte") {
    HttpRequestCycle c(kT0);
    c.begin_request(kT0);
    c.head_complete(true, false);
    CHECK(c.timeout(kT0 + 40'000, kT0 + 40'000 - C::kBodyTimeoutMs, none) == HttpTimeout::None);
    CHECK(c.timeout(kT0 + 40'000, kT0 + 40'000 - C::kBodyTimeoutMs - 1, none) == HttpTimeout::Body);
  }
  SUBCASE("responding: the responder's limits, unless a write is pending") {
    HttpRequestCycle c = responding();
    CHECK(c.timeout(kT0 + 10'000'000, kT0, none) == HttpTimeout::Responder);
    CHECK(c.timeout(kT0 + C::kSendTimeoutMs, kT0, kT0) == HttpTimeout::None);
    CHECK(c.timeout(kT0 + C::kSendTimeoutMs + 1, kT0, kT0) == HttpTimeout::Send);
  }
  SUBCASE("the send limit applies in every state but lingering") {
    HttpRequestCycle idle(kT0);
    CHECK(idle.timeout(kT0 + C::kSendTimeoutMs + 1, kT0, kT0) == HttpTimeout::Send);
    CHECK(idle.timeout(kT0 + C::kHeaderTimeoutMs + 1, kT0, kT0) == HttpTimeout::None);  // the write first
    HttpRequestCycle fin = responding();
    fin.response_done(kT0, false);
    CHECK(fin.timeout(kT0 + 10'000'000, kT0, none) == HttpTimeout::None);
    CHECK(fin.timeout(kT0 + C::kSendTimeoutMs + 1, kT0, kT0) == HttpTimeout::Send);
  }
  SUBCASE("lingering ends after its time, pending writes or not") {
    HttpRequestCycle c = responding();
    c.response_done(kT0, false);
    c.begin_linger(kT0 + 100);
    CHECK(c.timeout(kT0 + 100 + C::kLingerMs, kT0, kT0) == HttpTimeout::None);
    CHECK(c.timeout(kT0 + 101 + C::kLingerMs, kT0, kT0) == HttpTimeout::Linger);
  }
}

TEST_CASE("state names") {
  CHECK(std::string(request_state_name(RequestState::Idle)) == "idle");
  CHECK(std::string(request_state_name(RequestState::Lingering)) == "lingering");
}
