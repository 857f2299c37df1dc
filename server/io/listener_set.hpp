// ListenerSet: the listening sockets of one side of a loop (RTMP or HTTP), each kept with the
// address it was asked for and its family (tls), so that a configuration reload can open what a new
// file adds and close what it drops (server/config_reload.cpp). Opening is all or nothing: when one
// address cannot be bound, the ones the same call opened close again, and a later step of the
// reload that fails can undo the call too.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "config/address.hpp"
#include "server/io/listener.hpp"

namespace sluice::server {

class ListenerSet {
 public:
  struct Address {
    config::ListenAddress address;
    bool tls = false;
    bool operator==(const Address&) const = default;
  };
  // A listener for the family, not listening yet.
  using Make = std::function<std::unique_ptr<TcpListener>(bool tls)>;

  explicit ListenerSet(Make make) : make_(std::move(make)) {}

  // Listens on those of `wanted` not listened on yet; `bound` gets the addresses they bound.
  Result<void> open_missing(const std::vector<Address>& wanted, TcpListener::Sharing sharing,
                            std::vector<std::string>& bound);
  // Closes what the last open_missing opened (a later step of the reload failed).
  void undo_last_open();
  // Closes those not in `wanted` (connections they accepted stay).
  void close_unlisted(const std::vector<Address>& wanted);
  void close_all();
  // Each listener as bound (port 0 resolved), with its family: what other loops join.
  std::vector<Address> bound() const;

 private:
  struct Entry {
    Address wanted;
    std::unique_ptr<TcpListener> listener;
  };
  void retire(Entry& e);

  Make make_;
  std::vector<Entry> entries_;
  size_t opened_from_ = 0;
  // Closed listeners: their handles finish closing on the loop, so they are kept until it ends.
  std::vector<std::unique_ptr<TcpListener>> closed_;
};

}  // namespace sluice::server
