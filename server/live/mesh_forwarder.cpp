#include "server/live/mesh_forwarder.hpp"

#include <memory>
#include <utility>

#include "server/live/worker_mesh.hpp"

namespace sluice::server {

MeshForwarder::MeshForwarder(WorkerMesh& mesh, uint32_t from, uint32_t to, std::string key)
    : mesh_(mesh), from_(from), to_(to), key_(std::move(key)) {}

void MeshForwarder::on_frame(const media::FramePtr& f) {
  auto e = std::make_unique<MeshEvent>();
  e->kind = MeshEvent::Kind::Frame;
  e->from = from_;
  e->key = key_;
  e->frame = f;
  mesh_.post(to_, std::move(e));
}

void MeshForwarder::on_publish_start() { post_control(true); }

void MeshForwarder::on_publish_end() { post_control(false); }

void MeshForwarder::post_control(bool start) {
  auto e = std::make_unique<MeshEvent>();
  e->kind = start ? MeshEvent::Kind::PublishStart : MeshEvent::Kind::PublishEnd;
  e->from = from_;
  e->key = key_;
  mesh_.post(to_, std::move(e));
}

}  // namespace sluice::server
