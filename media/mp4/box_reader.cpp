#include "media/mp4/box_reader.hpp"

#include <cstdio>

#include "base/byte_io.hpp"

namespace sluice::media::mp4 {

std::string box_type_name(uint32_t type) {
  std::string s;
  for (int shift = 24; shift >= 0; shift -= 8) {
    const char c = static_cast<char>(type >> shift);
    if (c < 0x20 || c > 0x7E) {
      char hex[16];
      std::snprintf(hex, sizeof hex, "0x%08x", type);
      return hex;
    }
    s += c;
  }
  return s;
}

Result<BoxHeader> parse_box_header(std::span<const uint8_t> bytes, uint64_t space) {
  ByteReader r(bytes);
  BoxHeader h;
  const uint32_t size32 = r.u32be();
  h.type = r.u32be();
  if (r.failed()) return Error(Errc::Truncated, "box header");
  h.header_size = kBoxHeaderSize;
  if (size32 == 1) {
    h.size = r.u64be();
    if (r.failed()) return Error(Errc::Truncated, "box '" + box_type_name(h.type) + "' largesize");
    h.header_size = kLargeBoxHeaderSize;
  } else if (size32 == 0) {
    h.size = space;  // to the end of the parent
  } else {
    h.size = size32;
  }
  if (h.size < h.header_size) {
    return Error(Errc::Malformed,
                 "box '" + box_type_name(h.type) + "' size " + std::to_string(h.size) + " is smaller than its header");
  }
  if (h.size > space) {
    return Error(Errc::Malformed, "box '" + box_type_name(h.type) + "' size " + std::to_string(h.size) +
                                      " exceeds its parent (" + std::to_string(space) + " bytes left)");
  }
  return h;
}

Result<bool> BoxWalker::next(Box& out) {
  if (rest_.size() < kBoxHeaderSize) return false;  // rule 4
  if (!budget_->spend()) return Error(Errc::LimitExceeded, "more than " + std::to_string(kMaxBoxes) + " boxes");
  auto h = parse_box_header(rest_, rest_.size());
  if (!h) return std::move(h).error();
  const auto size = static_cast<size_t>(h->size);  // <= rest_.size(), checked by the parser
  out.type = h->type;
  out.payload = rest_.subspan(h->header_size, size - h->header_size);
  rest_ = rest_.subspan(size);
  return true;
}

Result<BoxWalker> BoxWalker::children(const Box& box, size_t skip) const {
  if (depth_ + 1 > kMaxBoxDepth)
    return Error(Errc::LimitExceeded, "boxes nested deeper than " + std::to_string(kMaxBoxDepth));
  if (box.payload.size() < skip) return Error(Errc::Truncated, "box '" + box_type_name(box.type) + "' too short");
  return BoxWalker(box.payload.subspan(skip), *budget_, depth_ + 1);
}

Result<std::optional<FoundBox>> find_child(const BoxWalker& walker, const Box& box, uint32_t type, size_t skip) {
  auto children = walker.children(box, skip);
  if (!children) return std::move(children).error();
  Box child;
  for (;;) {
    auto more = children->next(child);
    if (!more) return std::move(more).error();
    if (!*more) return std::optional<FoundBox>{};
    if (child.type == type) return std::optional<FoundBox>{FoundBox{child, *children}};
  }
}

Result<FullBox> full_box(const Box& box) {
  if (box.payload.size() < kFullBoxHeaderSize) return Error(Errc::Truncated, "box '" + box_type_name(box.type) + "'");
  FullBox f;
  f.version = box.payload[0];
  f.flags = load_u24be(box.payload.data() + 1);
  f.body = box.payload.subspan(kFullBoxHeaderSize);
  return f;
}

}  // namespace sluice::media::mp4
