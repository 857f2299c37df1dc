#include "server/http/flv_player.hpp"

#include <charconv>

#include "media/flv/flv.hpp"
#include "server/io/stream_socket.hpp"
#include "server/io/write_batch.hpp"

namespace sluice::server {

namespace {
// Room for the longest chunk-size line a tag needs: a tag is at most 11 + 0xFFFFFF + 4 bytes,
// "100000e\r\n" (9 characters); 8 hex digits and CRLF fit in 10.
constexpr size_t kMaxChunkLine = 10;

// Per tag and reader: to_chars, not snprintf (whose format parsing was 3% of an HTTP-FLV profile).
size_t chunk_line(uint8_t* out, size_t size) {
  char* p = reinterpret_cast<char*>(out);
  char* end = std::to_chars(p, p + kMaxChunkLine - 2, size, 16).ptr;
  *end++ = '\r';
  *end++ = '\n';
  return static_cast<size_t>(end - p);
}
}  // namespace

HttpFlvPlayer::HttpFlvPlayer(StreamSocket& socket, StreamRegistry& registry, std::string key, media::StreamHub& hub,
                             bool chunked, const config::PlayerQueueConfig& queue)
    : LiveSubscriber(socket, registry, std::move(key), hub, queue, " proto=http-flv"), chunked_(chunked) {
  subscribe();
}

bool HttpFlvPlayer::wants(const media::Frame& f) const {
  // FLV carries audio (8), video (9) and AMF0 script data (18) tags; nothing else is a valid tag.
  if (ended_) return false;
  if (f.rtmp_type != 8 && f.rtmp_type != 9 && f.rtmp_type != 18) return false;
  return f.payload.size() <= media::kFlvMaxDataSize;
}

void HttpFlvPlayer::on_publish_end() {
  // The hub allows a subscriber to leave from inside its callbacks. Leaving now means a new
  // publisher of the same name never reaches this response, which belongs to the old one.
  ended_ = true;
  unsubscribe();
  output_.request_flush();
}

void HttpFlvPlayer::end() {
  ended_ = true;
  unsubscribe();
  output_.request_flush();
}

void HttpFlvPlayer::append(const media::Frame& f, WriteBatch& batch) {
  uint32_t size = static_cast<uint32_t>(f.payload.size());
  uint8_t* h = batch.reserve_header(kMaxChunkLine + media::kFlvTagHeaderSize);
  size_t n = chunked_ ? chunk_line(h, media::kFlvTagHeaderSize + size + media::kFlvPreviousTagSizeSize) : 0;
  media::write_tag_header(f.rtmp_type, size, f.timestamp, h + n);
  batch.commit_header(n + media::kFlvTagHeaderSize);
  batch.add_slice(f.payload.share());
  uint8_t tail[6];
  media::write_previous_tag_size(size, tail);
  tail[4] = '\r';
  tail[5] = '\n';
  batch.add_bytes({tail, chunked_ ? size_t{6} : size_t{4}});
  ++tags_;
}

HttpFlvPlayer::Fill HttpFlvPlayer::fill(WriteBatch& batch, size_t max_bytes) {
  if (!header_sent_ && (!queue_empty() || ended_)) {
    header_sent_ = true;
    // The flags tell players (flv.js, mpegts.js) which tracks to wait for.
    bool audio = true, video = true;
    if (subscribed() && (hub().info().has_audio() || hub().info().has_video())) {
      audio = hub().info().has_audio();
      video = hub().info().has_video();
    }
    std::vector<uint8_t> header;
    media::write_flv_header(audio, video, header);
    if (chunked_) {
      uint8_t line[kMaxChunkLine + 1];
      batch.add_bytes({line, chunk_line(line, header.size())});
      header.push_back('\r');
      header.push_back('\n');
    }
    batch.add_bytes(header);
  }
  if (fill_frames(batch, max_bytes)) return Fill::More;
  return ended_ ? Fill::Ended : Fill::Idle;
}

}  // namespace sluice::server
