#include "media/flv/flv_parser.hpp"

#include <algorithm>
#include <string>
#include <utility>

namespace sluice::media {

Result<std::vector<FlvTag>> FlvParser::feed(std::span<const uint8_t> bytes) {
  std::vector<FlvTag> out;
  while (!failed_ && !bytes.empty()) {
    auto s = reader_.step(bytes);
    auto ok = s ? on_step(*s, out) : Result<void>(std::move(s).error());
    if (!ok) {
      failed_ = true;
      error_ = std::move(ok).error();
      break;
    }
    bytes = bytes.subspan(s->used);
  }
  if (failed_) return error_;
  return out;
}

Result<void> FlvParser::on_step(const FlvReader::Step& s, std::vector<FlvTag>& out) {
  using Done = FlvReader::Done;
  if (!s.body.empty()) take_body(s, out);
  switch (s.done) {
    case Done::FileHeader: header_ = reader_.file_header(); break;
    case Done::PreviousTagSize:
      if (reader_.previous_tag_size() != last_tag_size_) ++previous_size_mismatches_;
      break;
    case Done::TagHeader: {
      const uint32_t size = reader_.tag().data_size;
      if (size > limits_.max_tag_size)
        return Error(Errc::LimitExceeded,
                     "FLV tag " + std::to_string(tags_) + " body of " + std::to_string(size) + " bytes");
      if (size == 0) emit(Slice(), out);
      break;
    }
    case Done::TagBody:
    case Done::Nothing: break;
  }
  return {};
}

// A body that arrives whole is copied straight into its payload; a split one is gathered first.
void FlvParser::take_body(const FlvReader::Step& s, std::vector<FlvTag>& out) {
  const uint32_t size = reader_.tag().data_size;
  const bool complete = s.done == FlvReader::Done::TagBody;
  if (body_.empty() && complete) {
    emit(Slice::copy_of(s.body), out);
    return;
  }
  // Grow with what arrives rather than trusting DataSize up front: 11 bytes of header must not
  // be able to pin 16 MiB.
  if (body_.empty()) body_.reserve(std::min<size_t>(size, 64 * 1024));
  body_.insert(body_.end(), s.body.begin(), s.body.end());
  if (complete) emit(Slice::adopt(std::exchange(body_, {})), out);
}

void FlvParser::emit(Slice body, std::vector<FlvTag>& out) {
  const FlvTagHeader& h = reader_.tag();
  FlvTag t;
  t.type = h.type;
  t.filter = h.filter;
  t.timestamp = h.timestamp;
  t.stream_id = h.stream_id;
  t.body = std::move(body);
  out.push_back(std::move(t));
  ++tags_;
  last_tag_size_ = static_cast<uint32_t>(kFlvTagHeaderSize) + h.data_size;
}

}  // namespace sluice::media
