#include "server/hls/hls_share.hpp"

namespace sluice::server {

std::shared_ptr<HlsShare> HlsDirectory::find(const std::string& key) {
  std::lock_guard lock(mutex_);
  auto it = shares_.find(key);
  return it == shares_.end() ? nullptr : it->second;
}

std::shared_ptr<HlsShare> HlsDirectory::open(const std::string& key, uint32_t worker, bool& created) {
  std::lock_guard lock(mutex_);
  auto& slot = shares_[key];
  created = !slot;
  if (created) {
    slot = std::make_shared<HlsShare>(key, worker);
    ++retired_.muxers_started;
  }
  return slot;
}

void HlsDirectory::remove(const std::shared_ptr<HlsShare>& share) {
  share->closed = true;
  std::lock_guard lock(mutex_);
  auto it = shares_.find(share->key());
  if (it != shares_.end() && it->second == share) {
    retired_.requests += share->requests.load(std::memory_order_relaxed);
    retired_.bytes_out += share->bytes_out.load(std::memory_order_relaxed);
    shares_.erase(it);
  }
}

HlsDirectory::Totals HlsDirectory::totals() {
  std::lock_guard lock(mutex_);
  Totals t = retired_;
  for (auto& [key, share] : shares_) {
    t.requests += share->requests.load(std::memory_order_relaxed);
    t.bytes_out += share->bytes_out.load(std::memory_order_relaxed);
  }
  return t;
}

std::vector<std::shared_ptr<HlsShare>> HlsDirectory::all() {
  std::lock_guard lock(mutex_);
  std::vector<std::shared_ptr<HlsShare>> out;
  out.reserve(shares_.size());
  for (auto& [key, share] : shares_) out.push_back(share);
  return out;
}

}  // namespace sluice::server
