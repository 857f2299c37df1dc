// Where an HTTP connection is in its request/response cycle, and which time limit applies there.
// HttpConnection (server/http/connection.hpp) holds one HttpRequestCycle and tells it what happens;
// the cycle decides the next state and, once a second, whether the state's limit has passed. No
// I/O, no libuv: unit-tested in tests/unit/server/http/request_state_test.cpp.
//
//   Idle --first byte--> Head --head in--> Body --whole request in--> Ready --> Responding
//    ^                    `---- an upload: answered from its head ----> Ready        |
//    `---------------- answer queued, the connection takes another request ----------+
//                                answer queued, it does not (or FIN, or server stop) v
//                                     Finishing --all written--> Lingering --> closed
//
// Ready lasts only until the parser returns (the request is then dispatched). A request that is
// refused on the spot (a parse error, a timeout, the connection limit) goes to Responding from
// Idle, Head or Body and out again as soon as the error answer is queued.
#pragma once

#include <cstdint>
#include <optional>

namespace sluice::server {

enum class RequestState : uint8_t {
  Idle,        // between requests: no byte of the next one yet
  Head,        // receiving a request head
  Body,        // the head is in; receiving a body that is read and dropped (GET with a body)
  Ready,       // the request (or, for an upload, its head) is in; answered once the parser returns
  Responding,  // a responder answers; pipelined requests wait unparsed (an upload's body still arrives)
  Finishing,   // the last answer is queued: no further request, lingering once it is written
  Lingering,   // our FIN is sent: what the client still sends is read and dropped, then close
};

const char* request_state_name(RequestState s);

// Which limit a connection has passed, from HttpRequestCycle::timeout().
enum class HttpTimeout : uint8_t {
  None,       // within every limit
  Responder,  // responding with nothing to write: the responder's own limits apply (an upload's body)
  NoRequest,  // a new connection sent no request
  KeepAlive,  // an idle keep-alive connection
  Head,       // slowloris: the head is not complete in time (408)
  Body,       // a body to drop stalled (408)
  Send,       // the client takes no byte of what is written
  Linger,     // lingering is over
};

class HttpRequestCycle {
 public:
  // Slowloris: a request's head must arrive completely within this time of its first byte; a new
  // connection must send its first request within it too.
  static constexpr uint64_t kHeaderTimeoutMs = 10'000;
  // An idle keep-alive connection (no byte of a next request) is closed after this long.
  static constexpr uint64_t kKeepAliveTimeoutMs = 15'000;
  // A request body that stalls (no byte) for this long is answered 408 (an upload's too).
  static constexpr uint64_t kBodyTimeoutMs = 30'000;
  // A client that accepts no byte of a response for this long is gone (or hostile).
  static constexpr uint64_t kSendTimeoutMs = 60'000;
  // After an answer that closes the connection, what the client still sends is read and dropped
  // for this long, so the answer is not destroyed by a TCP reset before the client reads it.
  static constexpr uint64_t kLingerMs = 2'000;

  explicit HttpRequestCycle(uint64_t now_ms) : since_ms_(now_ms) {}

  RequestState state() const { return state_; }
  // The request being received or answered has a body that is not read to its end.
  bool body_unread() const { return body_unread_; }
  // No request has been answered on this connection yet.
  bool first_request() const { return first_request_; }

  // The parser meets the first byte of a request: Idle -> Head.
  void begin_request(uint64_t now_ms);
  // The head is complete: Head -> Body, or Head -> Ready when it is answered from its head (an
  // upload, whose body then streams to the responder).
  void head_complete(bool has_body, bool answer_from_head);
  // The whole request is in: Head or Body -> Ready; an upload being answered stays Responding.
  void message_complete();
  // The router has a responder for it: Ready -> Responding.
  void dispatched();
  // An answer that cannot wait for the request (a parse error, a timeout, the connection limit):
  // Idle, Head, Body or Ready -> Responding.
  void respond_now();
  // The answer is queued: Responding -> Idle when the connection may take another request, else
  // Finishing (and always when the request's body was left unread: it cannot be skipped).
  void response_done(uint64_t now_ms, bool reusable);
  // No further request (the peer sent FIN, the server stops): Idle, Head or Body -> Finishing.
  void finish_after_write();
  // Everything is written: Finishing -> Lingering.
  void begin_linger(uint64_t now_ms);

  // Whether the parser runs: between requests and while one is received; while responding only
  // when the responder takes the body.
  bool parses(bool responder_takes_body) const {
    return state_ <= RequestState::Body || (state_ == RequestState::Responding && responder_takes_body);
  }
  // Finishing and Lingering: what arrives is dropped unread.
  bool drops_input() const { return state_ >= RequestState::Finishing; }

  // The limit passed at now_ms. last_read_ms: when a byte was last received (or the body made
  // progress); write_pending_since: when the socket last took bytes of a write still pending,
  // nullopt when none is.
  HttpTimeout timeout(uint64_t now_ms, uint64_t last_read_ms, std::optional<uint64_t> write_pending_since) const;

 private:
  void enter(RequestState s, uint64_t now_ms) {
    state_ = s;
    since_ms_ = now_ms;
  }

  RequestState state_ = RequestState::Idle;
  uint64_t since_ms_;  // when Idle, Head or Lingering began
  bool body_unread_ = false;
  bool first_request_ = true;
};

}  // namespace sluice::server
