#include "server/live/stream_registry.hpp"

#include <algorithm>
#include <atomic>

#include "server/io/wall_clock.hpp"
#include "server/live/worker_mesh.hpp"

namespace sluice::server {

namespace {
constexpr size_t kMaxStreamNameBytes = 200;

bool name_char_ok(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         std::string_view("-_.~=+@:,!").find(c) != std::string_view::npos;
}

// Every registry on every worker: what rtmp.limits.max_streams counts.
std::atomic<uint32_t> g_streams{0};
}  // namespace

std::string_view stream_name_problem(std::string_view name) {
  if (name.empty()) return "empty name";
  if (name.size() > kMaxStreamNameBytes) return "name longer than 200 bytes";
  for (char c : name) {
    if (c != '/' && !name_char_ok(c)) return "character not allowed in a stream name";
  }
  size_t start = 0;
  while (start <= name.size()) {
    size_t end = name.find('/', start);
    if (end == std::string_view::npos) end = name.size();
    std::string_view segment = name.substr(start, end - start);
    if (segment.empty()) return "empty path segment (leading, trailing or double '/')";
    if (segment == "." || segment == "..") return "'.' or '..' segment";
    start = end + 1;
  }
  return {};
}

bool valid_stream_name(std::string_view name) { return stream_name_problem(name).empty(); }

StreamRegistry::~StreamRegistry() {
  if (!mesh_) g_streams.fetch_sub(static_cast<uint32_t>(entries_.size()), std::memory_order_relaxed);
}

uint32_t StreamRegistry::total_streams() { return g_streams.load(std::memory_order_relaxed); }

media::StreamHub::Options hub_options(const config::AppConfig& app) {
  media::StreamHub::Options o;
  o.gop_cache = app.gop_cache;
  o.gop_max_frames = app.gop_cache_max_frames;
  o.gop_max_bytes = app.gop_cache_max_bytes;
  return o;
}

media::StreamHub* StreamRegistry::find(const std::string& key) {
  auto it = entries_.find(key);
  return it == entries_.end() ? nullptr : it->second.hub.get();
}

void StreamRegistry::attach_mesh(WorkerMesh* mesh, uint32_t worker) {
  mesh_ = mesh;
  worker_ = worker;
}

bool StreamRegistry::is_live(const std::string& key) {
  media::StreamHub* hub = find(key);
  if (hub && hub->has_publisher()) return true;
  return mesh_ && mesh_->directory().owner(key) != StreamDirectory::kNoOwner;
}

media::StreamHub* StreamRegistry::get_or_create(const std::string& key, const media::StreamHub::Options& options) {
  auto it = entries_.find(key);
  if (it != entries_.end()) return it->second.hub.get();
  int owner = StreamDirectory::kNoOwner;
  if (mesh_) {
    // Several workers: a name counts once against max_streams, whichever workers hold it (the
    // mesh's directory knows every name, and checks and records under one lock).
    if (!mesh_->directory().add_interest_within(key, worker_, max_streams_, owner)) return nullptr;
  } else if (g_streams.fetch_add(1, std::memory_order_relaxed) >= max_streams_ && max_streams_ != 0) {
    g_streams.fetch_sub(1, std::memory_order_relaxed);
    return nullptr;
  }
  Entry& e = entries_[key];
  e.hub = std::make_unique<media::StreamHub>(key, options);
  // First interest in this name here: if another worker publishes it, ask for its messages.
  if (mesh_) tell_owner(owner, MeshEvent::Kind::Subscribe, key);
  return e.hub.get();
}

StreamRegistry::Claim StreamRegistry::claim_publisher(const std::string& key, const SessionPeer* publisher,
                                                      const media::StreamHub::Options& options) {
  if (!get_or_create(key, options)) return Claim::Full;
  Entry& e = entries_[key];
  if (e.publisher) return Claim::Taken;
  std::vector<uint32_t> interested;
  if (mesh_ && !mesh_->directory().claim(key, worker_, interested)) {
    remove_if_unused(key);
    return Claim::Taken;
  }
  // Still publishing without a publisher here: a publication that ended quietly for this claim (a
  // takeover), or a mirror of the worker it was taken from. Its caches are the old publisher's:
  // the forwarders set up below would replay them to the other workers' players.
  if (e.hub->has_publisher()) e.hub->forget_caches();
  for (uint32_t w : interested) add_forwarder(key, e, w);
  e.publisher = publisher;
  e.published_since_ms = wall_clock_ms();
  return Claim::Claimed;
}

void StreamRegistry::set_seat(const std::string& key, const SessionPeer* publisher, PublisherSeat* seat) {
  auto it = entries_.find(key);
  if (it != entries_.end() && it->second.publisher == publisher) it->second.seat = seat;
}

StreamRegistry::Eviction StreamRegistry::evict(const std::string& key, uint64_t stale_ms, const std::string& why,
                                               const SessionPeer* taker, Handover& handover) {
  auto it = entries_.find(key);
  if (it == entries_.end() || !it->second.publisher) {
    const int owner = mesh_ ? mesh_->directory().owner(key) : StreamDirectory::kNoOwner;
    return owner != StreamDirectory::kNoOwner && owner != static_cast<int>(worker_) ? Eviction::Elsewhere
                                                                                    : Eviction::Freed;
  }
  PublisherSeat* seat = it->second.seat;
  if (!seat || (stale_ms != 0 && seat->quiet_ms() < stale_ms)) return Eviction::Kept;
  handover.takeovers = it->second.takeovers + 1;
  handover.continue_after = seat->give_up(why, taker);  // may remove the entry (nobody plays it here)
  it = entries_.find(key);
  return it == entries_.end() || !it->second.publisher ? Eviction::Freed : Eviction::Kept;
}

void StreamRegistry::set_takeovers(const std::string& key, uint32_t n) {
  auto it = entries_.find(key);
  if (it != entries_.end()) it->second.takeovers = n;
}

void StreamRegistry::end_abandoned_publication(const std::string& key) {
  if (mesh_ && mesh_->directory().owner(key) != StreamDirectory::kNoOwner) return;  // published after all
  auto it = entries_.find(key);
  if (it != entries_.end() && !it->second.publisher) it->second.hub->end_publish();
  if (!mesh_) return;
  // The mirrors of the worker that published it were not told either (their forwarders went
  // quietly); one without the stream, or with a publisher of its own, ignores this.
  for (uint32_t w = 0; w < mesh_->size(); ++w) {
    if (w == worker_) continue;
    auto ev = std::make_unique<MeshEvent>();
    ev->kind = MeshEvent::Kind::PublishEnd;
    ev->from = worker_;
    ev->key = key;
    mesh_->post(w, std::move(ev));
  }
}

void StreamRegistry::evict_elsewhere(const std::string& key, uint64_t stale_ms, EvictDone done) {
  const int owner = mesh_ ? mesh_->directory().owner(key) : StreamDirectory::kNoOwner;
  if (owner == StreamDirectory::kNoOwner || owner == static_cast<int>(worker_)) return done(true, Handover{});
  auto& waiters = evict_waiters_[key];
  waiters.push_back(std::move(done));
  if (waiters.size() > 1) return;  // asked already: one answer serves them all
  auto ev = std::make_unique<MeshEvent>();
  ev->kind = MeshEvent::Kind::Evict;
  ev->from = worker_;
  ev->key = key;
  ev->id = stale_ms;
  mesh_->post(static_cast<uint32_t>(owner), std::move(ev));
}

void StreamRegistry::on_evict_request(const MeshEvent& ev) {
  Handover handover;
  const std::string why = std::string(ev.id != 0 ? "stale, " : "") + "replaced by a new publisher (on another loop)";
  const Eviction result = evict(ev.key, ev.id, why, nullptr, handover);
  auto answer = std::make_unique<MeshEvent>();
  answer->kind = MeshEvent::Kind::EvictDone;
  answer->from = worker_;
  answer->key = ev.key;
  answer->freed = result != Eviction::Kept;
  answer->id = handover.takeovers;
  answer->continues = handover.continue_after.has_value();
  answer->timestamp = handover.continue_after.value_or(0);
  // Behind anything the forwarders posted: the asking loop's mirror has every frame of the old
  // publication before its own publisher continues it.
  mesh_->post(ev.from, std::move(answer));
}

void StreamRegistry::on_evict_answer(const MeshEvent& ev) {
  auto it = evict_waiters_.find(ev.key);
  if (it == evict_waiters_.end()) return;
  std::vector<EvictDone> waiters = std::move(it->second);
  evict_waiters_.erase(it);
  Handover handover;
  handover.takeovers = static_cast<uint32_t>(ev.id);
  if (ev.continues) handover.continue_after = ev.timestamp;
  for (auto& w : waiters) w(ev.freed, handover);
}

void StreamRegistry::release_publisher(const std::string& key, const SessionPeer* publisher) {
  auto it = entries_.find(key);
  if (it == entries_.end() || it->second.publisher != publisher) return;
  it->second.publisher = nullptr;
  it->second.seat = nullptr;
  it->second.published_since_ms = 0;
  if (mesh_) {
    // The forwarders have posted PublishEnd (end_publish ran first); a new publisher, here or on
    // another worker, sets up its own.
    drop_forwarders(it->second);
    mesh_->directory().release(key, worker_);
  }
  remove_if_unused(key);
}

bool StreamRegistry::in_use(const std::string& key) {
  auto it = entries_.find(key);
  if (it != entries_.end() && (it->second.holders > 0 || it->second.hub->subscriber_count() > 0)) return true;
  return mesh_ && mesh_->directory().wanted_elsewhere(key, worker_);
}

void StreamRegistry::hold(const std::string& key) {
  auto it = entries_.find(key);
  if (it != entries_.end()) ++it->second.holders;
}

void StreamRegistry::release(const std::string& key) {
  auto it = entries_.find(key);
  if (it == entries_.end()) return;
  if (it->second.holders > 0) --it->second.holders;
  remove_if_unused(key);
}

void StreamRegistry::remove_if_unused(const std::string& key) {
  auto it = entries_.find(key);
  if (it == entries_.end()) return;
  if (it->second.publisher || it->second.holders > 0 || it->second.hub->subscriber_count() > 0) return;
  entries_.erase(it);
  if (!mesh_) g_streams.fetch_sub(1, std::memory_order_relaxed);
  if (mesh_) tell_owner(mesh_->directory().remove_interest(key, worker_), MeshEvent::Kind::Unsubscribe, key);
}

void StreamRegistry::request_keyframe(const std::string& key) {
  auto it = entries_.find(key);
  if (it == entries_.end()) return;
  ++keyframe_requests_;
  if (it->second.seat) return it->second.seat->request_keyframe();
  if (mesh_) tell_owner(mesh_->directory().owner(key), MeshEvent::Kind::KeyframeWanted, key);
}

void StreamRegistry::tell_owner(int owner, MeshEvent::Kind kind, const std::string& key) {
  if (owner == StreamDirectory::kNoOwner || owner == static_cast<int>(worker_)) return;
  auto ev = std::make_unique<MeshEvent>();
  ev->kind = kind;
  ev->from = worker_;
  ev->key = key;
  mesh_->post(static_cast<uint32_t>(owner), std::move(ev));
}

void StreamRegistry::sample_rates(uint64_t now) {
  for (auto& [key, e] : entries_) {
    uint64_t bytes = e.hub->bytes_in();
    if (e.rate_at_ms != 0 && now > e.rate_at_ms && bytes >= e.rate_bytes) {
      double kbps = static_cast<double>(bytes - e.rate_bytes) * 8.0 / static_cast<double>(now - e.rate_at_ms);
      e.kbps = e.kbps == 0 ? kbps : 0.6 * e.kbps + 0.4 * kbps;
    }
    e.rate_bytes = bytes;
    e.rate_at_ms = now;
  }
}

void StreamRegistry::count_drop(const std::string& key) {
  ++dropped_frames_;
  auto it = entries_.find(key);
  if (it != entries_.end()) ++it->second.dropped_frames;
}

void StreamRegistry::add_forwarder(const std::string& key, Entry& e, uint32_t to) {
  for (const auto& f : e.forwarders) {
    if (f->to() == to) return;
  }
  e.forwarders.push_back(std::make_unique<MeshForwarder>(*mesh_, worker_, to, key));
  MeshForwarder* f = e.forwarders.back().get();
  // The hub replays metadata, sequence headers and the GOP to a new subscriber but does not
  // announce the publish: the mirror must start its session before those frames.
  if (e.hub->has_publisher()) f->on_publish_start();
  e.hub->add_subscriber(f);
}

void StreamRegistry::drop_forwarders(Entry& e) {
  for (const auto& f : e.forwarders) e.hub->remove_subscriber(f.get());
  e.forwarders.clear();
}

void StreamRegistry::on_mesh_event(MeshEvent& ev, uint64_t now_ms) {
  if (ev.kind == MeshEvent::Kind::Evict) return on_evict_request(ev);
  if (ev.kind == MeshEvent::Kind::EvictDone) return on_evict_answer(ev);
  auto it = entries_.find(ev.key);
  if (it == entries_.end()) return;  // nobody here wants this stream any more
  Entry& e = it->second;
  switch (ev.kind) {
    case MeshEvent::Kind::Subscribe:
      if (e.publisher) add_forwarder(ev.key, e, ev.from);
      return;
    case MeshEvent::Kind::KeyframeWanted:
      if (e.seat) e.seat->request_keyframe();
      return;
    case MeshEvent::Kind::Unsubscribe:
      for (size_t i = 0; i < e.forwarders.size(); ++i) {
        if (e.forwarders[i]->to() != ev.from) continue;
        e.hub->remove_subscriber(e.forwarders[i].get());
        e.forwarders.erase(e.forwarders.begin() + static_cast<long>(i));
        break;
      }
      remove_if_unused(ev.key);
      return;
    default: break;
  }
  // Mirror events. A local publisher means the name changed hands and these are the previous
  // owner's last words: ignore them.
  if (e.publisher) return;
  switch (ev.kind) {
    case MeshEvent::Kind::PublishStart:
      e.hub->start_publish();
      e.hub->health().on_publish_start(false);
      break;
    case MeshEvent::Kind::PublishEnd: e.hub->end_publish(); break;
    // A copy of this loop's own (media/frame.hpp, copy_frame): no reference count shared with the owner.
    case MeshEvent::Kind::Frame: {
      media::FramePtr copy = media::copy_frame(*ev.frame);
      e.hub->health().on_frame(*copy, now_ms);
      e.hub->publish(std::move(copy));
      break;
    }
    default: break;
  }
}

}  // namespace sluice::server
