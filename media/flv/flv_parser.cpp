#include "media/flv/flv_parser.hpp"

#include <algorithm>
#include <cstring>

#include "base/byte_io.hpp"

namespace sluice::media {


Result<std::vector<FlvTag>> FlvParser::feed(std::span<const uint8_t> bytes) {
  std::vector<FlvTag> out;
  while (!bytes.empty()) {
    auto used = step(bytes, out);
    if (!used) {
      state_ = State::Failed;
      error_ = used.error();
      return std::move(used).error();
    }
    bytes = bytes.subspan(*used);
  }
  if (state_ == State::Failed) return error_;
  return out;
}

Result<size_t> FlvParser::step(std::span<const uint8_t> in, std::vector<FlvTag>& out) {
  switch (state_) {
    case State::FileHeader: {
      const size_t used = fill_fixed(in, kFlvFileHeaderSize);
      if (fill_ == kFlvFileHeaderSize) {
        auto ok = on_file_header();
        if (!ok) return std::move(ok).error();
      }
      return used;
    }
    case State::SkipToBody: {
      const size_t used = static_cast<size_t>(std::min<uint64_t>(skip_, in.size()));
      skip_ -= used;
      if (skip_ == 0) state_ = State::PreviousTagSize;
      return used;
    }
    case State::PreviousTagSize: {
      const size_t used = fill_fixed(in, kFlvPreviousTagSizeSize);
      if (fill_ == kFlvPreviousTagSizeSize) on_previous_tag_size();
      return used;
    }
    case State::TagHeader: {
      const size_t used = fill_fixed(in, kFlvTagHeaderSize);
      if (fill_ == kFlvTagHeaderSize) {
        auto ok = on_tag_header(out);
        if (!ok) return std::move(ok).error();
      }
      return used;
    }
    case State::TagBody:
      return take_body(in, out);
    case State::Failed:
      return error_;
  }
  return Error(Errc::BadState, "FLV parser state");
}

// Accumulates up to `want` bytes of a fixed-size field into fixed_.
size_t FlvParser::fill_fixed(std::span<const uint8_t> in, size_t want) {
  const size_t n = std::min(want - fill_, in.size());
  std::memcpy(fixed_.data() + fill_, in.data(), n);
  fill_ += n;
  return n;
}

Result<void> FlvParser::on_file_header() {
  auto h = parse_flv_header(std::span<const uint8_t>(fixed_.data(), kFlvFileHeaderSize));
  if (!h) return std::move(h).error();
  header_ = *h;
  fill_ = 0;
  skip_ = h->data_offset - kFlvFileHeaderSize;
  state_ = skip_ ? State::SkipToBody : State::PreviousTagSize;
  return {};
}

void FlvParser::on_previous_tag_size() {
  if (load_u32be(fixed_.data()) != last_tag_size_) ++previous_size_mismatches_;
  fill_ = 0;
  state_ = State::TagHeader;
}

Result<void> FlvParser::on_tag_header(std::vector<FlvTag>& out) {
  auto h = parse_tag_header(std::span<const uint8_t>(fixed_.data(), kFlvTagHeaderSize));
  if (!h) return std::move(h).error();
  fill_ = 0;
  if (h->data_size > limits_.max_tag_size)
    return Error(Errc::LimitExceeded, "FLV tag " + std::to_string(tags_) + " body of " + std::to_string(h->data_size) + " bytes");
  tag_ = *h;
  state_ = State::TagBody;
  if (tag_.data_size == 0) emit(Slice(), out);
  return {};
}

// A body that arrives whole is copied straight into its payload; a split one is gathered first.
size_t FlvParser::take_body(std::span<const uint8_t> in, std::vector<FlvTag>& out) {
  const size_t need = tag_.data_size - body_.size();
  const size_t n = std::min(need, in.size());
  if (body_.empty() && n == tag_.data_size) {
    emit(Slice::copy_of(in.first(n)), out);
    return n;
  }
  // Grow with what arrives rather than trusting DataSize up front: 11 bytes of header must not
  // be able to pin 16 MiB.
  if (body_.empty()) body_.reserve(std::min<size_t>(tag_.data_size, 64 * 1024));
  body_.insert(body_.end(), in.begin(), in.begin() + static_cast<std::ptrdiff_t>(n));
  if (body_.size() == tag_.data_size) emit(Slice::adopt(std::exchange(body_, {})), out);
  return n;
}

void FlvParser::emit(Slice body, std::vector<FlvTag>& out) {
  FlvTag t;
  t.type = tag_.type;
  t.filter = tag_.filter;
  t.timestamp = tag_.timestamp;
  t.stream_id = tag_.stream_id;
  t.body = std::move(body);
  out.push_back(std::move(t));
  ++tags_;
  last_tag_size_ = static_cast<uint32_t>(kFlvTagHeaderSize) + tag_.data_size;
  state_ = State::PreviousTagSize;
}

}  // namespace sluice::media
