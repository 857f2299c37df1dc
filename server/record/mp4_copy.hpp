// The MP4 copy of a finished recording (record.mp4, docs/recording.md): indexes NAME.flv, plans
// the faststart MP4 (media/record/mp4_layout.hpp) and writes it as NAME.mp4 through a temporary
// name, synced before it is renamed. Blocking file I/O: the threadpool's, inside finalize.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sluice::server {

struct Mp4CopyReport {
  bool ok = false;
  std::string error;
  std::string path;
  uint64_t bytes = 0;
  uint32_t video_samples = 0;
  uint32_t audio_samples = 0;
  std::vector<std::string> notes;  // what the MP4 could not hold (another codec, a config change)
};

// Never replaces an existing mp4_path.
Mp4CopyReport write_mp4_copy(const std::string& flv_path, const std::string& mp4_path);

}  // namespace sluice::server
