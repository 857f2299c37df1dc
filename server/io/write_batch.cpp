#include "server/io/write_batch.hpp"

namespace sluice::server {

namespace {
// A batch that grew large once (a late joiner's GOP replay, a burst) gives its memory back: in
// steady state a live player's batch holds a few frames, and per-player memory is what limits how
// many players a server holds.
constexpr size_t kKeepArenaCapacity = 2 * 1024;
constexpr size_t kKeepPieceCapacity = 32;
}  // namespace

void WriteBatch::extend_arena_piece(size_t offset, size_t len) {
  if (len == 0) return;
  total_ += len;
  // Adjacent arena bytes merge into one iovec.
  if (!pieces_.empty() && pieces_.back().in_arena && pieces_.back().offset + pieces_.back().len == offset) {
    pieces_.back().len += len;
    return;
  }
  pieces_.push_back({true, offset, len});
}

void WriteBatch::add_bytes(std::span<const uint8_t> bytes) {
  size_t offset = arena_.size();
  arena_.insert(arena_.end(), bytes.begin(), bytes.end());
  extend_arena_piece(offset, bytes.size());
}

void WriteBatch::after_arena_append(size_t old_size) { extend_arena_piece(old_size, arena_.size() - old_size); }

uint8_t* WriteBatch::reserve_header(size_t max) {
  reserved_at_ = arena_.size();
  arena_.resize(reserved_at_ + max);
  return arena_.data() + reserved_at_;
}

void WriteBatch::commit_header(size_t len) {
  arena_.resize(reserved_at_ + len);
  extend_arena_piece(reserved_at_, len);
}

void WriteBatch::add_slice(Slice&& slice) {
  if (slice.empty()) return;
  total_ += slice.size();
  pieces_.push_back({false, refs_.size(), slice.size()});
  refs_.push_back(std::move(slice));
}

std::span<uv_buf_t> WriteBatch::finalize() {
  bufs_.clear();
  bufs_.reserve(pieces_.size());
  for (const Piece& p : pieces_) {
    const uint8_t* base = p.in_arena ? arena_.data() + p.offset : refs_[p.offset].data();
    bufs_.push_back(uv_buf_init(reinterpret_cast<char*>(const_cast<uint8_t*>(base)), static_cast<unsigned>(p.len)));
  }
  return bufs_;
}

std::span<uv_buf_t> WriteBatch::unwritten(size_t written) {
  size_t first = 0;
  while (first < bufs_.size() && written >= bufs_[first].len) written -= bufs_[first++].len;
  if (first < bufs_.size()) {
    bufs_[first].base += written;
    bufs_[first].len -= written;
  }
  return std::span<uv_buf_t>(bufs_).subspan(first);
}

void WriteBatch::clear() {
  refs_.clear();
  pieces_.clear();
  bufs_.clear();
  arena_.clear();
  total_ = 0;
  if (arena_.capacity() > kKeepArenaCapacity) arena_.shrink_to_fit();
  if (pieces_.capacity() > kKeepPieceCapacity) {
    pieces_.shrink_to_fit();
    refs_.shrink_to_fit();
    bufs_.shrink_to_fit();
  }
}

}  // namespace sluice::server
