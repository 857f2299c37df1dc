#include "media/vod/mp4_demuxer.hpp"

#include <algorithm>
#include <string>

#include "media/mp4/box_reader.hpp"
#include "media/vod/mp4_movie.hpp"

namespace sluice::media::vod {

using namespace mp4;  // the top-level boxes it walks

Mp4Demuxer::Mp4Demuxer(uint64_t file_size, Limits limits) : file_size_(file_size), limits_(limits) {}

ByteRange Mp4Demuxer::next_request() const {
  switch (state_) {
    case State::BoxHeader:
      // Enough for a header with a largesize; less near the end of the file.
      return {pos_, std::min<uint64_t>(kLargeBoxHeaderSize, file_size_ - pos_)};
    case State::Movie: return {pos_, moov_size_};
    default: return {pos_, 0};
  }
}

Result<void> Mp4Demuxer::fail(Error e) {
  state_ = State::Failed;
  error_ = e;
  return e;
}

Result<void> Mp4Demuxer::feed(uint64_t offset, std::span<const uint8_t> bytes) {
  if (state_ == State::Failed) return error_;
  if (state_ == State::Done) return ok();
  const ByteRange need = next_request();
  if (offset > need.offset || offset + bytes.size() < need.end()) {
    return fail(Error(Errc::BadState, "MP4 demuxer fed bytes [" + std::to_string(offset) + ", " +
                                          std::to_string(offset + bytes.size()) + ") that do not cover [" +
                                          std::to_string(need.offset) + ", " + std::to_string(need.end()) + ")"));
  }
  while (state_ == State::BoxHeader || state_ == State::Movie) {
    if (pos_ < offset || pos_ - offset > bytes.size()) break;
    auto progressed = step(bytes.subspan(static_cast<size_t>(pos_ - offset)));
    if (!progressed) return fail(std::move(progressed).error());
    if (!*progressed) break;
  }
  return ok();
}

Result<bool> Mp4Demuxer::step(std::span<const uint8_t> avail) {
  return state_ == State::BoxHeader ? step_box_header(avail) : step_movie(avail);
}

Result<bool> Mp4Demuxer::step_box_header(std::span<const uint8_t> avail) {
  // Rule 4 of box_reader.hpp: a few stray bytes at the end of the file are not a box.
  if (file_size_ - pos_ < kBoxHeaderSize) return Error(Errc::Malformed, "no moov box in the file");
  if (avail.size() < next_request().size) return false;
  if (++boxes_seen_ > kMaxTopLevelBoxes) return Error(Errc::LimitExceeded, "too many top-level boxes before moov");
  auto h = parse_box_header(avail, file_size_ - pos_);
  if (!h) return std::move(h).error().wrap("top-level box at " + std::to_string(pos_));
  if (h->type == box_type("moof")) return Error(Errc::Unsupported, "fragmented MP4 is not supported");
  if (h->type == box_type("moov")) {
    if (h->size > limits_.max_moov_bytes)
      return Error(Errc::LimitExceeded, "moov box of " + std::to_string(h->size) + " bytes");
    moov_size_ = h->size;
    moov_header_ = h->header_size;
    state_ = State::Movie;
    return true;
  }
  pos_ += h->size;  // mdat and the rest: skipped, never read
  return true;
}

Result<bool> Mp4Demuxer::step_movie(std::span<const uint8_t> avail) {
  if (avail.size() < moov_size_) return false;
  const auto payload = avail.subspan(moov_header_, static_cast<size_t>(moov_size_ - moov_header_));
  auto index = parse_mp4_movie(payload, file_size_, limits_.max_samples);
  if (!index) return std::move(index).error().wrap("moov");
  index_ = std::move(*index);
  state_ = State::Done;
  return false;
}

Result<MediaIndex> Mp4Demuxer::finish() {
  if (state_ == State::Failed) return error_;
  if (state_ != State::Done) return Error(Errc::BadState, "MP4 demuxer finished before the movie box was read");
  state_ = State::Failed;  // the index has been moved out
  error_ = Error(Errc::BadState, "MP4 index already taken");
  return std::move(index_);
}

Result<MediaIndex> demux_mp4(std::span<const uint8_t> file) {
  Mp4Demuxer demuxer(file.size());
  while (!demuxer.done()) {
    const ByteRange need = demuxer.next_request();
    const auto piece = need.offset < file.size() ? file.subspan(static_cast<size_t>(need.offset)) : file.last(0);
    auto fed = demuxer.feed(need.offset, piece);
    if (!fed) return std::move(fed).error();
  }
  return demuxer.finish();
}

}  // namespace sluice::media::vod
