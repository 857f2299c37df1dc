#include "bench/load/flv_file.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string_view>

namespace sluice::bench {

namespace {

constexpr size_t kFileHeaderMin = 9;
constexpr size_t kTagHeader = 11;
constexpr size_t kPrevTagSize = 4;
constexpr uint8_t kFilterBit = 0x20;  // encrypted tag (FLV 10.1 "Filter")
// Larger than any real FLV a bench publishes, small enough that a wrong path fails clearly.
constexpr long kMaxFileSize = 1L << 30;

uint32_t u24(const uint8_t* p) { return (uint32_t(p[0]) << 16) | (uint32_t(p[1]) << 8) | p[2]; }
uint32_t u32(const uint8_t* p) { return (uint32_t(p[0]) << 24) | u24(p + 1); }

// An AMF0 string "onMetaData" at the start of a script body.
bool is_on_metadata(std::span<const uint8_t> body) {
  constexpr std::string_view kName = "onMetaData";
  return body.size() >= 3 + kName.size() && body[0] == 0x02 && body[1] == 0 && body[2] == kName.size() &&
         std::memcmp(body.data() + 3, kName.data(), kName.size()) == 0;
}

}  // namespace

Result<FlvFile> FlvFile::load(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return Error(Errc::Io, "cannot open " + path);
  std::vector<uint8_t> bytes;
  std::fseek(f, 0, SEEK_END);
  const long size = std::ftell(f);
  std::fseek(f, 0, SEEK_SET);
  if (size < 0 || size > kMaxFileSize) {
    std::fclose(f);
    return Error(Errc::LimitExceeded, path + ": not a regular file or larger than 1 GiB");
  }
  bytes.resize(static_cast<size_t>(size));
  const size_t got = std::fread(bytes.data(), 1, bytes.size(), f);
  std::fclose(f);
  if (got != bytes.size()) return Error(Errc::Io, "short read on " + path);
  auto parsed = parse(std::move(bytes));
  if (!parsed) return std::move(parsed).error().wrap(path);
  return parsed;
}

Result<FlvFile> FlvFile::parse(std::vector<uint8_t> bytes) {
  FlvFile f;
  f.bytes_ = std::move(bytes);
  const uint8_t* p = f.bytes_.data();
  const size_t n = f.bytes_.size();
  if (n < kFileHeaderMin || std::memcmp(p, "FLV", 3) != 0) return Error(Errc::Malformed, "not an FLV file");
  const uint32_t header_size = u32(p + 5);
  if (header_size < kFileHeaderMin || header_size > n) return Error(Errc::Malformed, "bad FLV header size");
  size_t pos = header_size + kPrevTagSize;  // PreviousTagSize0 is always 0
  bool have_media = false;
  uint32_t prev_video_ts = 0;
  bool have_video = false;
  while (pos + kTagHeader <= n) {
    const uint8_t* h = p + pos;
    if (h[0] & kFilterBit) return Error(Errc::Unsupported, "encrypted tag at byte " + std::to_string(pos));
    FlvTag t;
    t.type = h[0] & 0x1f;
    t.size = u24(h + 1);
    t.timestamp = u24(h + 4) | (uint32_t(h[7]) << 24);
    t.offset = static_cast<uint32_t>(pos + kTagHeader);
    if (t.offset + size_t{t.size} + kPrevTagSize > n) {
      f.truncated_ = true;
      break;
    }
    pos = t.offset + size_t{t.size} + kPrevTagSize;
    if (t.type == flv_tag_type::kScript) {
      if (f.metadata_index_ < 0 && is_on_metadata(f.body(t))) f.metadata_index_ = static_cast<int>(f.tags_.size());
    } else if (t.type == flv_tag_type::kAudio || t.type == flv_tag_type::kVideo) {
      if (!have_media) f.first_ts_ = t.timestamp;
      have_media = true;
      f.last_ts_ = std::max(f.last_ts_, t.timestamp);
      if (t.type == flv_tag_type::kVideo) {
        // The first positive gap between video tags approximates one frame's duration.
        if (have_video && t.timestamp > prev_video_ts && f.loop_gap_ms_ == 40 && t.timestamp - prev_video_ts < 1000)
          f.loop_gap_ms_ = t.timestamp - prev_video_ts;
        prev_video_ts = t.timestamp;
        have_video = true;
      }
    } else {
      continue;  // unknown tag types are skipped, as players do
    }
    f.tags_.push_back(t);
  }
  if (!have_media) return Error(Errc::Malformed, "no audio or video tag");
  return f;
}

std::span<const uint8_t> FlvFile::metadata() const {
  if (metadata_index_ < 0) return {};
  return body(tags_[static_cast<size_t>(metadata_index_)]);
}

}  // namespace sluice::bench
