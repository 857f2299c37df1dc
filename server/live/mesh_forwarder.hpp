// MeshForwarder: on the worker that owns a live stream, the one subscriber that stands for all of
// another worker's players of it. It posts each frame to that worker once (the other worker's
// mirror hub fans it out locally) and the publish start/end around them. The other worker reads
// only the frame's immutable fields, to make its own copy (media/frame.hpp, copy_frame), whose
// wire body its own players build: no worker writes to a frame another may be reading.
#pragma once

#include <cstdint>
#include <string>

#include "media/subscriber.hpp"

namespace sluice::server {

class WorkerMesh;

class MeshForwarder final : public media::Subscriber {
 public:
  MeshForwarder(WorkerMesh& mesh, uint32_t from, uint32_t to, std::string key);

  void on_frame(const media::FramePtr& f) override;
  void on_publish_start() override;
  void on_publish_end() override;

  uint32_t to() const { return to_; }

 private:
  void post_control(bool start);

  WorkerMesh& mesh_;
  uint32_t from_;
  uint32_t to_;
  std::string key_;
};

}  // namespace sluice::server
