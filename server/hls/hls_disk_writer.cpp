#include "server/hls/hls_disk_writer.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string_view>
#include <vector>

#include "media/hls/playlist.hpp"
#include "server/io/file_io.hpp"
#include "server/io/logging.hpp"

namespace sluice::server {

namespace fs = std::filesystem;

namespace {

// "<prefix><digits><ext>", the names of segments and init segments.
bool numbered(std::string_view name, std::string_view prefix, std::string_view ext) {
  if (!name.starts_with(prefix) || !name.ends_with(ext)) return false;
  const std::string_view digits = name.substr(prefix.size(), name.size() - prefix.size() - ext.size());
  return !digits.empty() && std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The names this writer makes (rule 3 removes only these from an earlier run).
bool our_file(std::string_view name) {
  if (name.ends_with(".tmp")) name.remove_suffix(4);
  return name == "index.m3u8" || numbered(name, "seg", ".ts") || numbered(name, "seg", ".m4s") ||
         numbered(name, "init", ".mp4");
}

std::string segment_name(uint64_t msn, media::hls::Container c) {
  return "seg" + std::to_string(msn) + (c == media::hls::Container::Fmp4 ? ".m4s" : ".ts");
}

}  // namespace

struct HlsDiskWriter::Job {
  struct File {
    std::string name;
    std::vector<Slice> pieces;
    uint64_t msn = ~uint64_t{0};  // a segment's; ~0 for the others
  };

  uv_work_t req{};
  std::shared_ptr<HlsDiskWriter*> owner;
  std::string dir;
  bool clean_first = false;
  std::vector<File> files;  // segments and inits first, the playlist last
  std::vector<std::string> remove;
  uint64_t next_msn = 0;
  uint32_t inits = 0;
  // Results, from the threadpool.
  std::vector<std::pair<uint64_t, std::string>> segments_written;
  size_t written = 0;
  std::string error;

  void write(const File& f) {
    const std::string tmp = dir + "/" + f.name + ".tmp";
    Fd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    bool ok = fd.get() >= 0;
    for (size_t i = 0; ok && i < f.pieces.size(); ++i) ok = write_all(fd.get(), f.pieces[i].data(), f.pieces[i].size());
    if (ok) ok = ::fsync(fd.get()) == 0 || errno == EINVAL;
    if (ok) ok = ::rename(tmp.c_str(), (dir + "/" + f.name).c_str()) == 0;
    if (!ok) {
      error = f.name + ": " + std::strerror(errno);
      ::unlink(tmp.c_str());
      return;
    }
    ++written;
    if (f.msn != ~uint64_t{0}) segments_written.emplace_back(f.msn, f.name);
  }

  void clean() {
    std::error_code ec;
    fs::directory_iterator it(dir, ec), end;
    for (; !ec && it != end; it.increment(ec)) {
      const std::string name = it->path().filename().string();
      if (our_file(name)) ::unlink(it->path().c_str());
    }
  }

  void run() {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) {
      error = dir + ": " + ec.message();
      return;
    }
    if (clean_first) clean();
    for (const File& f : files) {
      write(f);
      if (!error.empty()) return;  // the playlist never lists a segment that is not there
    }
    for (const std::string& name : remove) ::unlink((dir + "/" + name).c_str());
  }
};

HlsDiskWriter::HlsDiskWriter(uv_loop_t* loop, std::string dir, std::string key)
    : loop_(loop), dir_(std::move(dir)), key_(std::move(key)), self_(std::make_shared<HlsDiskWriter*>(this)) {}

HlsDiskWriter::~HlsDiskWriter() { *self_ = nullptr; }  // a job in flight finishes alone

void HlsDiskWriter::on_snapshot(std::shared_ptr<const HlsSnapshot> s) {
  latest_ = std::move(s);
  if (!busy_) start_job();
}

void HlsDiskWriter::start_job() {
  const std::shared_ptr<const HlsSnapshot> s = latest_;
  if (!s || !s->ready) return;
  auto job = std::make_unique<Job>();
  job->owner = self_;
  job->dir = dir_;
  job->clean_first = !cleaned_;
  job->next_msn = next_msn_;
  job->inits = inits_written_;
  for (const auto& init : s->inits) {
    if (init.id <= inits_written_) continue;
    Job::File f{"init" + std::to_string(init.id) + ".mp4", {}};
    f.pieces.push_back(init.bytes.share());
    job->files.push_back(std::move(f));
    job->inits = std::max(job->inits, init.id);
  }
  std::vector<media::hls::Segment> complete;
  for (const auto& seg : s->segments) {
    if (!seg.complete) continue;
    complete.push_back(media::hls::clone(seg));
    if (seg.msn < next_msn_) continue;
    Job::File f{segment_name(seg.msn, s->params.container), {}, seg.msn};
    for (const auto& part : seg.parts) f.pieces.push_back(part.bytes.share());
    job->files.push_back(std::move(f));
    job->next_msn = seg.msn + 1;
  }
  if (job->next_msn == next_msn_) return;  // no new segment: the playlist is the same too
  media::hls::PlaylistParams params = s->params;
  params.low_latency = false;  // parts are not written: a standard playlist of whole segments
  params.skip = false;
  params.query.clear();
  job->files.push_back({"index.m3u8", {}});
  job->files.back().pieces.push_back(Slice::copy_of(media::hls::render_playlist(complete, params)));
  // Rule 3: keep the listed segments and the one just dropped.
  const size_t listed = std::min<size_t>(params.window, complete.size());
  const uint64_t keep_from = complete[complete.size() - listed].msn;
  while (!on_disk_.empty() && on_disk_.front().first + 1 < keep_from) {
    job->remove.push_back(on_disk_.front().second);
    on_disk_.pop_front();
  }
  busy_ = true;
  cleaned_ = true;
  Job* raw = job.release();
  raw->req.data = raw;
  int rc = uv_queue_work(loop_, &raw->req, &HlsDiskWriter::run, &HlsDiskWriter::done);
  if (rc != 0) {
    busy_ = false;
    SLUICE_LOG_ERROR("proto=hls event=hls_write_failed stream={} dir=\"{}\" error=\"{}\"", key_, printable(dir_),
                     uv_strerror(rc));
    delete raw;
  }
}

void HlsDiskWriter::run(uv_work_t* req) { static_cast<Job*>(req->data)->run(); }

void HlsDiskWriter::done(uv_work_t* req, int /*status*/) {
  std::unique_ptr<Job> job(static_cast<Job*>(req->data));
  if (HlsDiskWriter* w = *job->owner) w->finished(*job);
}

void HlsDiskWriter::finished(Job& job) {
  busy_ = false;
  for (auto& seg : job.segments_written) on_disk_.push_back(std::move(seg));
  files_written_ += job.written;
  // A failed segment is not tried again (its turn has passed); a failed init is.
  next_msn_ = job.next_msn;
  if (job.error.empty()) inits_written_ = job.inits;
  if (!job.error.empty() && !failing_) {
    SLUICE_LOG_ERROR("proto=hls event=hls_write_failed stream={} dir=\"{}\" error=\"{}\"", key_, printable(dir_),
                     printable(job.error));
  } else if (job.error.empty() && failing_) {
    SLUICE_LOG_INFO("proto=hls event=hls_write_resumed stream={} dir=\"{}\"", key_, printable(dir_));
  }
  failing_ = !job.error.empty();
  if (latest_ && latest_->segments.size() && latest_->segments.back().msn >= next_msn_) start_job();
}

}  // namespace sluice::server
