// RegistryClient: one loop's connection to the cluster registry (Redis, docs/cluster.md) through
// hiredis's asynchronous API and its libuv adapter, so that commands never block the loop. It
// authenticates and selects the database on connect, reconnects with backoff (server/relay/
// backoff.hpp) when Redis goes away, and measures the round trip with a PING every few seconds.
//
// A command's callback always runs exactly once: with the reply, or with nullopt when there was no
// answer (not connected, or the connection dropped with the command in flight). No exception
// crosses a libuv or hiredis callback.
#pragma once

#include <uv.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "config/cluster.hpp"
#include "server/cluster/lease_book.hpp"
#include "server/relay/backoff.hpp"

struct redisAsyncContext;

namespace sluice::server::cluster {

struct RegistryReply {
  enum class Type : uint8_t { Status, String, Integer, Nil, Error, Array };
  Type type = Type::Nil;
  std::string str;  // Status, String, Error
  int64_t integer = 0;
  std::vector<RegistryReply> elements;
};

class RegistryClient {
 public:
  using Done = std::function<void(std::optional<RegistryReply>)>;
  using OnState = std::function<void(bool connected)>;

  RegistryClient(uv_loop_t* loop, const config::ClusterConfig& config, std::string who);
  ~RegistryClient();
  RegistryClient(const RegistryClient&) = delete;
  RegistryClient& operator=(const RegistryClient&) = delete;

  // Before start(): this connection only listens to `channel` (Redis pub/sub) and hands each
  // message to `on_message`. It subscribes again after every reconnection and sends no PING: a
  // subscribed connection's other replies could not be told from its messages.
  void listen(std::string channel, std::function<void(const std::string& message)> on_message);

  // Connects now and after every loss; `on_state` hears each (re)connection and loss.
  void start(OnState on_state);
  // Sends what is queued and closes (at most 0.5 s later); what gets no answer is answered with
  // nullopt. The loop must run for the close to finish.
  void stop();

  void send(const RegistryCommand& command, Done done);

  bool connected() const { return ready_; }
  // stop() has finished: the handles are closing (they are gone after the loop's next turn).
  bool closed() const { return ctx_ == nullptr && !timers_open_; }
  // The last PING round trip, ms (negative before the first).
  double rtt_ms() const { return rtt_ms_; }
  uint64_t reconnects() const { return reconnects_; }

 private:
  struct Pending;
  static void on_connect(const redisAsyncContext* c, int status);
  static void on_disconnect(const redisAsyncContext* c, int status);
  static void on_reply(redisAsyncContext* c, void* reply, void* privdata);
  static void on_message(redisAsyncContext* c, void* reply, void* privdata);
  void subscribe();
  void connect();
  void force_close();
  void lost(const std::string& why);  // logs it and tries again after a backoff
  void ping();
  void raw_send(const std::vector<std::string>& argv, Done done);

  uv_loop_t* loop_;
  const config::ClusterConfig& config_;
  std::string who_;  // for logs: "worker=N"
  redisAsyncContext* ctx_ = nullptr;
  bool ready_ = false;  // connected, authenticated, database selected
  bool stopping_ = false;
  OnState on_state_;
  std::string channel_;  // listen(): the channel subscribed to
  std::function<void(const std::string&)> on_message_;
  Backoff backoff_;
  uv_timer_t retry_timer_{};
  uv_timer_t ping_timer_{};
  bool timers_open_ = false;
  double rtt_ms_ = -1;
  uint64_t reconnects_ = 0;
};

}  // namespace sluice::server::cluster
