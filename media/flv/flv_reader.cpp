#include "media/flv/flv_reader.hpp"

#include <algorithm>
#include <cstring>

#include "base/byte_io.hpp"

namespace sluice::media {

size_t FlvReader::fill(std::span<const uint8_t> in, size_t want) {
  const size_t n = std::min(want - fill_, in.size());
  std::memcpy(fixed_.data() + fill_, in.data(), n);
  fill_ += n;
  return n;
}

Result<FlvReader::Step> FlvReader::step(std::span<const uint8_t> in) {
  Step s;
  switch (state_) {
    case State::FileHeader: {
      s.used = fill(in, kFlvFileHeaderSize);
      if (fill_ < kFlvFileHeaderSize) return s;
      auto h = parse_flv_header(partial());
      if (!h) return std::move(h).error();
      header_ = *h;
      fill_ = 0;
      gap_ = h->data_offset - kFlvFileHeaderSize;
      state_ = gap_ > 0 ? State::HeaderGap : State::PreviousTagSize;
      s.done = Done::FileHeader;
      return s;
    }
    case State::HeaderGap:
      s.used = static_cast<size_t>(std::min<uint64_t>(gap_, in.size()));
      gap_ -= s.used;
      if (gap_ == 0) state_ = State::PreviousTagSize;
      return s;
    case State::PreviousTagSize:
      s.used = fill(in, kFlvPreviousTagSizeSize);
      if (fill_ < kFlvPreviousTagSizeSize) return s;
      previous_tag_size_ = load_u32be(fixed_.data());
      fill_ = 0;
      state_ = State::TagHeader;
      s.done = Done::PreviousTagSize;
      return s;
    case State::TagHeader:
      s.used = fill(in, kFlvTagHeaderSize);
      if (fill_ < kFlvTagHeaderSize) return s;
      tag_ = *parse_tag_header(partial());  // 11 bytes always parse
      fill_ = 0;
      ++tags_;
      body_left_ = tag_.data_size;
      state_ = body_left_ > 0 ? State::TagBody : State::PreviousTagSize;
      s.done = Done::TagHeader;
      return s;
    case State::TagBody:
      s.used = std::min<size_t>(body_left_, in.size());
      s.body = in.first(s.used);
      body_left_ -= static_cast<uint32_t>(s.used);
      if (body_left_ > 0) return s;
      state_ = State::PreviousTagSize;
      s.done = Done::TagBody;
      return s;
  }
  return s;
}

}  // namespace sluice::media
