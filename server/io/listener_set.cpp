#include "server/io/listener_set.hpp"

#include <algorithm>

#include "server/io/logging.hpp"

namespace sluice::server {

Result<void> ListenerSet::open_missing(const std::vector<Address>& wanted, TcpListener::Sharing sharing,
                                       std::vector<std::string>& bound) {
  opened_from_ = entries_.size();
  for (const Address& a : wanted) {
    const bool listening = std::any_of(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.wanted == a; });
    if (listening) continue;
    std::unique_ptr<TcpListener> listener = make_(a.tls);
    if (auto r = listener->listen(a.address, sharing); !r) {
      listener->close();
      closed_.push_back(std::move(listener));
      undo_last_open();
      return r;
    }
    bound.push_back(listener->bound_address());
    entries_.push_back({a, std::move(listener)});
  }
  return ok();
}

void ListenerSet::undo_last_open() {
  for (size_t i = opened_from_; i < entries_.size(); ++i) retire(entries_[i]);
  entries_.resize(std::min(opened_from_, entries_.size()));
}

void ListenerSet::close_unlisted(const std::vector<Address>& wanted) {
  std::erase_if(entries_, [&](Entry& e) {
    if (std::find(wanted.begin(), wanted.end(), e.wanted) != wanted.end()) return false;
    SLUICE_LOG_INFO("event=listener_closed address={} tls={}", e.listener->bound_address(), e.wanted.tls);
    retire(e);
    return true;
  });
  opened_from_ = entries_.size();
}

void ListenerSet::close_all() {
  for (Entry& e : entries_) e.listener->close();
}

std::vector<ListenerSet::Address> ListenerSet::bound() const {
  std::vector<Address> out;
  for (const Entry& e : entries_) out.push_back({e.listener->bound(), e.wanted.tls});
  return out;
}

void ListenerSet::retire(Entry& e) {
  e.listener->close();
  closed_.push_back(std::move(e.listener));
}

}  // namespace sluice::server
