#include "server/record/finalize.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "media/record/finalize_plan.hpp"
#include "media/record/recording_scanner.hpp"
#include "server/io/logging.hpp"
#include "server/io/file_io.hpp"
#include "server/record/mp4_copy.hpp"

namespace sluice::server {

namespace {

constexpr size_t kChunk = 1 << 20;

std::string errno_text(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

// [offset, offset + size) of `in` appended to `out`, through a buffer (works across file systems).
bool copy_range(int in, int out, uint64_t offset, uint64_t size, std::vector<uint8_t>& buffer) {
  while (size > 0) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(size, buffer.size()));
    ssize_t n = ::pread(in, buffer.data(), want, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    if (!write_all(out, buffer.data(), static_cast<size_t>(n))) return false;
    offset += static_cast<uint64_t>(n);
    size -= static_cast<uint64_t>(n);
  }
  return true;
}

}  // namespace

FinalizeReport finalize_recording(const std::string& part_path, bool mp4) {
  FinalizeReport r;
  constexpr std::string_view kPart = ".part";
  if (part_path.size() <= kPart.size() || !part_path.ends_with(kPart)) {
    r.error = "not a .part file";
    return r;
  }
  r.final_path = part_path.substr(0, part_path.size() - kPart.size());
  Fd in(::open(part_path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (in.get() < 0) {
    r.error = errno_text("open");
    return r;
  }
  std::vector<uint8_t> buffer(kChunk);
  media::record::RecordingScanner scanner;
  for (;;) {
    ssize_t n = ::read(in.get(), buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      r.error = errno_text("read");
      return r;
    }
    if (n == 0) break;
    r.part_bytes += static_cast<uint64_t>(n);
    scanner.feed(std::span<const uint8_t>(buffer.data(), static_cast<size_t>(n)));
  }
  media::record::RecordingSummary summary = scanner.finish();
  r.dropped_bytes = summary.torn_bytes;
  r.stopped_at = summary.stop_reason;
  r.keyframes = summary.keyframes.size();
  auto plan = media::record::plan_finalize(summary);
  if (!plan) {
    r.error = "nothing to keep: " + plan.error().message();
    return r;
  }
  r.duration_ms = plan->duration_ms;
  // A final file beside its .part is a finalize that was interrupted: the .part goes last.
  ::unlink(r.final_path.c_str());
  Fd out(::open(r.final_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
  if (out.get() < 0) {
    r.error = errno_text("create");
    return r;
  }
  bool ok = write_all(out.get(), plan->head.data(), plan->head.size());
  for (const auto& range : plan->copy) {
    if (!ok) break;
    ok = copy_range(in.get(), out.get(), range.offset, range.size, buffer);
  }
  if (ok && ::fsync(out.get()) != 0) ok = false;
  if (!ok) {
    r.error = errno_text("write");
    ::unlink(r.final_path.c_str());
    return r;
  }
  r.final_bytes = plan->final_size;
  if (mp4) {
    r.mp4_wanted = true;
    const std::string mp4_path = r.final_path.substr(0, r.final_path.size() - 4) + ".mp4";
    ::unlink(mp4_path.c_str());  // a copy made before a crash that kept the .part: made again
    Mp4CopyReport m = write_mp4_copy(r.final_path, mp4_path);
    r.mp4_ok = m.ok;
    r.mp4_path = m.path;
    r.mp4_error = m.error;
    r.mp4_bytes = m.bytes;
    r.mp4_notes = std::move(m.notes);
  }
  ::unlink(part_path.c_str());
  // The rename of the directory entries is durable once the directory is synced.
  std::string dir = std::filesystem::path(r.final_path).parent_path().string();
  Fd d(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (d.get() >= 0) ::fsync(d.get());
  r.ok = true;
  return r;
}

void log_mp4_copy(const FinalizeReport& r) {
  if (!r.mp4_wanted) return;
  if (!r.mp4_ok) {
    SLUICE_LOG_ERROR("event=record_mp4_failed file=\"{}\" error=\"{}\" (the FLV is complete)", r.final_path,
                     r.mp4_error);
    return;
  }
  std::string notes;
  for (const std::string& n : r.mp4_notes) notes += (notes.empty() ? "" : "; ") + n;
  SLUICE_LOG_INFO("event=record_mp4 file=\"{}\" bytes={}{}", r.mp4_path, r.mp4_bytes,
                  notes.empty() ? std::string() : " left_out=\"" + notes + "\"");
}

std::vector<std::string> find_part_files(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  namespace fs = std::filesystem;
  for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_regular_file(ec) && it->path().string().ends_with(".flv.part")) out.push_back(it->path().string());
  }
  return out;
}

}  // namespace sluice::server
