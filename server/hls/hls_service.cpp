#include "server/hls/hls_service.hpp"

#include <algorithm>

#include "server/io/logging.hpp"
#include "server/io/loop_context.hpp"
#include "server/live/stream_registry.hpp"
#include "server/live/worker_mesh.hpp"

namespace sluice::server {

HlsService::HlsService(LoopContext& loop, StreamRegistry& registry, HlsDirectory& directory, WorkerMesh* mesh)
    : loop_(loop), registry_(registry), directory_(directory), mesh_(mesh) {}

HlsService::~HlsService() { stop(); }

HlsService::Open HlsService::open(const config::AppConfig& app, const std::string& key,
                                  std::shared_ptr<HlsShare>& out) {
  out = directory_.find(key);
  if (!out) {
    // A stream pulled on demand (an app's upstreams, or its owner in a cluster) is on its way:
    // the muxer waits for it like the first playlist waits for its first segment.
    if (!registry_.is_live(key) && !registry_.ask_upstream(app, key.substr(app.name.size() + 1))) return Open::NotLive;
    bool created = false;
    out = directory_.open(key, loop_.worker(), created);
    if (created) {
      if (!registry_.get_or_create(key, hub_options(app))) {
        directory_.remove(out);
        out.reset();
        return Open::Full;
      }
      start_muxer(app, key, out);
    }
  }
  out->last_request_ms = loop_.now_ms();
  ++out->requests;
  return Open::Ok;
}

void HlsService::on_publish(const config::AppConfig& app, const std::string& key) {
  if (!app.hls.enabled || !app.hls.starts_at_publish()) return;
  bool created = false;
  auto share = directory_.open(key, loop_.worker(), created);
  share->last_request_ms = loop_.now_ms();
  if (created) start_muxer(app, key, share);
}

void HlsService::start_muxer(const config::AppConfig& app, const std::string& key, std::shared_ptr<HlsShare> share) {
  SLUICE_LOG_INFO("proto=hls event=hls_start stream={} variant={} segment_ms={} part_ms={}", key,
                  app.hls.variant == config::HlsVariant::MpegTs ? "mpegts"
                  : app.hls.variant == config::HlsVariant::Fmp4 ? "fmp4"
                                                                : "low-latency",
                  app.hls.segment.count(),
                  app.hls.variant == config::HlsVariant::LowLatency ? app.hls.part.count() : 0);
  Running r;
  r.app = loop_.keep(app);
  r.last_live_ms = loop_.now_ms();
  r.muxer =
      std::make_unique<HlsMuxer>(loop_, registry_, app, key, std::move(share), [this](HlsShare& s) { notify(s); });
  muxers_[key] = std::move(r);
}

void HlsService::notify(HlsShare& share) {
  const uint64_t others = share.waiting_workers.load(std::memory_order_acquire) & ~(uint64_t{1} << loop_.worker());
  if (mesh_ && others != 0) {
    for (uint32_t w = 0; w < mesh_->size() && w < 64; ++w) {
      if ((others & (uint64_t{1} << w)) == 0) continue;
      auto e = std::make_unique<MeshEvent>();
      e->kind = MeshEvent::Kind::HlsUpdate;
      e->from = loop_.worker();
      e->key = share.key();
      mesh_->post(w, std::move(e));
    }
  }
  wake(share.key());
}

void HlsService::add_waiter(HlsShare& share, HlsWaiter* w) {
  auto& list = waiters_[share.key()];
  if (list.empty() && loop_.worker() < 64) {
    share.waiting_workers.fetch_or(uint64_t{1} << loop_.worker(), std::memory_order_acq_rel);
  }
  list.push_back(w);
}

void HlsService::remove_waiter(const std::string& key, HlsWaiter* w) {
  auto it = waiters_.find(key);
  if (it == waiters_.end()) return;
  std::erase(it->second, w);
  std::replace(waking_.begin(), waking_.end(), w, static_cast<HlsWaiter*>(nullptr));
  if (!it->second.empty()) return;
  waiters_.erase(it);
  if (auto share = directory_.find(key); share && loop_.worker() < 64) {
    share->waiting_workers.fetch_and(~(uint64_t{1} << loop_.worker()), std::memory_order_acq_rel);
  }
}

void HlsService::wake(const std::string& key) {
  auto it = waiters_.find(key);
  if (it == waiters_.end()) return;
  // A woken waiter usually answers and removes itself; it may add a new waiter (its next
  // request on a keep-alive connection), which waits for the next snapshot.
  std::vector<HlsWaiter*> now = it->second;
  std::swap(waking_, now);
  for (HlsWaiter*& w : waking_) {
    if (HlsWaiter* target = std::exchange(w, nullptr)) target->on_hls_update();
  }
  std::swap(waking_, now);
}

void HlsService::tick(uint64_t now_ms) {
  for (auto it = muxers_.begin(); it != muxers_.end();) {
    const config::HlsConfig& hls = it->second.app->hls;
    HlsShare& share = *it->second.muxer->share();
    const bool live = registry_.is_live(it->first);
    if (live) it->second.last_live_ms = now_ms;
    if (hls.starts_at_publish() && live) share.last_request_ms = now_ms;
    const uint64_t idle_ms = uint64_t(hls.idle_close.count());
    const bool asked = now_ms < share.last_request_ms.load() + idle_ms;
    const bool published = now_ms < it->second.last_live_ms + idle_ms;
    if (asked && published) {
      ++it;
      continue;
    }
    SLUICE_LOG_INFO("proto=hls event=hls_stop stream={} reason=\"{}\"", it->first,
                    live ? "no request for idle_close" : "not published for idle_close");
    auto muxer = std::move(it->second.muxer);
    it = muxers_.erase(it);
    directory_.remove(muxer->share());
    const std::string key = muxer->key();
    muxer.reset();
    wake(key);
  }
}

void HlsService::stop() {
  for (auto& [key, r] : muxers_) directory_.remove(r.muxer->share());
  muxers_.clear();
}

uint64_t HlsService::bytes_held() const {
  uint64_t n = 0;
  for (const auto& [key, r] : muxers_) n += r.muxer->bytes_held();
  return n;
}

}  // namespace sluice::server
