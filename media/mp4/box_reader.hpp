// ISO BMFF (MP4) boxes: header parsing and a bounds-checked walk over a container's children.
//
// Rules (they are what keeps a hostile file from crashing or starving the server):
//  1. A box never extends past its parent: a size larger than the space left is an error, as is a
//     size smaller than its own header. Size 1 means a 64-bit largesize follows; size 0 means "to
//     the end of the parent" (the file, for a top-level box).
//  2. Every child is at least 8 bytes, so a walk always advances and ends: there are no offsets
//     that point backwards, hence no loops.
//  3. Nesting is bounded (kMaxBoxDepth) and so is the number of boxes one movie parse may visit
//     (kMaxBoxes, shared through a BoxBudget).
//  4. Fewer than 8 bytes left at the end of a container are ignored: QuickTime writers end some
//     atoms with a 32-bit zero terminator.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "base/result.hpp"

namespace sluice::media::mp4 {

// Deeper nesting than this is no real file (moov/trak/mdia/minf/stbl/stsd/entry/esds is 8): it
// bounds the work a crafted chain of nested containers can cause.
inline constexpr uint32_t kMaxBoxDepth = 16;
// A movie box of a real file has tens of boxes, a few thousand with hundreds of tracks; more means
// a file made of empty boxes to burn CPU.
inline constexpr uint32_t kMaxBoxes = 100'000;

inline constexpr size_t kBoxHeaderSize = 8;
inline constexpr size_t kLargeBoxHeaderSize = 16;
inline constexpr size_t kFullBoxHeaderSize = 4;  // version + flags

constexpr uint32_t box_type(const char (&s)[5]) {
  return uint32_t(uint8_t(s[0])) << 24 | uint32_t(uint8_t(s[1])) << 16 | uint32_t(uint8_t(s[2])) << 8 |
         uint32_t(uint8_t(s[3]));
}
// "moov", or "0x12345678" when not printable; for error messages.
std::string box_type_name(uint32_t type);

struct BoxHeader {
  uint32_t type = 0;
  uint8_t header_size = 0;  // 8, or 16 with a largesize
  uint64_t size = 0;        // the whole box, header included
};

// Parses the header at the start of `bytes` (8 bytes, 16 for a largesize). `space` is what is left
// of the parent from the box's first byte: the box must fit in it (rule 1).
// Errors: Errc::Truncated when `bytes` is too short, Errc::Malformed for a bad size.
Result<BoxHeader> parse_box_header(std::span<const uint8_t> bytes, uint64_t space);

struct Box {
  uint32_t type = 0;
  std::span<const uint8_t> payload;  // after the header
};

// The number of boxes one parse may still visit.
class BoxBudget {
 public:
  explicit BoxBudget(uint32_t boxes = kMaxBoxes) : left_(boxes) {}
  bool spend() { return left_ > 0 ? (--left_, true) : false; }

 private:
  uint32_t left_;
};

// Walks the child boxes laid out in `payload`.
class BoxWalker {
 public:
  BoxWalker(std::span<const uint8_t> payload, BoxBudget& budget, uint32_t depth = 0)
      : rest_(payload), budget_(&budget), depth_(depth) {}

  // The next child in `out`; false at the end. Errors: a malformed header, or the box budget.
  Result<bool> next(Box& out);
  // Walks the children of `box`, which start `skip` bytes into its payload (a full box header,
  // the fixed fields of a sample entry). Errc::LimitExceeded past kMaxBoxDepth, Errc::Truncated
  // when the payload is shorter than `skip`.
  Result<BoxWalker> children(const Box& box, size_t skip = 0) const;
  uint32_t depth() const { return depth_; }

 private:
  std::span<const uint8_t> rest_;
  BoxBudget* budget_;
  uint32_t depth_;
};

// A box found among another box's children, with the walker of its level, to descend into it.
struct FoundBox {
  Box box;
  BoxWalker level;
};
// The first child of type `type` of `box` (produced by `walker`; its children start `skip` bytes
// into its payload), or nullopt. Errors from walking the children.
Result<std::optional<FoundBox>> find_child(const BoxWalker& walker, const Box& box, uint32_t type, size_t skip = 0);

// A full box's version, flags and the body after them.
struct FullBox {
  uint8_t version = 0;
  uint32_t flags = 0;
  std::span<const uint8_t> body;
};
Result<FullBox> full_box(const Box& box);

}  // namespace sluice::media::mp4
