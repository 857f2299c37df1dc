// WriteBatch: one uv_write worth of output for a connection.
//
// Small bytes (session replies, per-subscriber chunk headers) go into an arena; large shared media
// bodies are referenced, not copied, and kept alive by Slice refs until the write callback. Pieces
// are recorded as offsets so the arena may grow while the batch is built; finalize() turns them
// into uv_buf_t pointers once it can no longer move.
#pragma once

#include <uv.h>

#include <cstdint>
#include <span>
#include <vector>

#include "base/bytes.hpp"

namespace sluice::server {

class WriteBatch {
 public:
  uv_write_t req{};

  // Appends bytes to the arena as (part of) the current piece.
  void add_bytes(std::span<const uint8_t> bytes);
  // The arena, for writers that append directly (ChunkWriter::write); call after_arena_append().
  std::vector<uint8_t>& arena() { return arena_; }
  void after_arena_append(size_t old_size);
  // Reserves room for a header of at most max bytes; commit with the real length.
  uint8_t* reserve_header(size_t max);
  void commit_header(size_t len);
  // References a shared body.
  void add_slice(Slice&& slice);

  // Builds the uv_buf_t array; the batch must not change until clear().
  std::span<uv_buf_t> finalize();
  // What finalize() built, less the first `written` bytes (what a partial write left).
  std::span<uv_buf_t> unwritten(size_t written);
  void clear();

  bool empty() const { return total_ == 0; }
  size_t bytes() const { return total_; }
  size_t pieces() const { return pieces_.size(); }

 private:
  struct Piece {
    bool in_arena;
    size_t offset;  // arena offset, or index into refs_
    size_t len;
  };
  void extend_arena_piece(size_t offset, size_t len);

  std::vector<uint8_t> arena_;
  std::vector<Slice> refs_;
  std::vector<Piece> pieces_;
  std::vector<uv_buf_t> bufs_;
  size_t total_ = 0;
  size_t reserved_at_ = 0;
};

}  // namespace sluice::server
