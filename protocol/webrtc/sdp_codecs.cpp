#include "protocol/webrtc/sdp_codecs.hpp"

#include <cctype>

namespace sluice::protocol::webrtc {
namespace {

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  }
  return true;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// Lower is better. profile-level-id is profile_idc, the constraint flags and level_idc, one byte
// each in hex (RFC 6184 8.1).
int h264_rank(const std::string& profile, std::string_view hint) {
  if (profile.size() != 6) return 3;
  for (char c : profile) {
    if (hex_value(c) < 0) return 3;
  }
  if (hint.size() == 6 && lower(hint).compare(0, 4, profile, 0, 4) == 0) return 0;
  if (profile.compare(0, 2, "42") != 0) return 3;
  // constraint_set1_flag (0x40 of the second byte): constrained baseline, which every decoder takes.
  return (hex_value(profile[2]) & 4) ? 1 : 2;
}

std::optional<uint8_t> rtx_for(const MediaSection& section, uint8_t payload_type) {
  for (const auto& c : section.codecs) {
    if (!iequals(c.name, "rtx")) continue;
    auto apt = fmtp_parameter(c.fmtp, "apt");
    if (apt && *apt == std::to_string(payload_type)) return c.payload_type;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string_view> fmtp_parameter(std::string_view fmtp, std::string_view name) {
  while (!fmtp.empty()) {
    const size_t semi = fmtp.find(';');
    std::string_view item = fmtp.substr(0, semi);
    fmtp = semi == std::string_view::npos ? std::string_view{} : fmtp.substr(semi + 1);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    const size_t eq = item.find('=');
    if (eq != std::string_view::npos && iequals(item.substr(0, eq), name)) return item.substr(eq + 1);
  }
  return std::nullopt;
}

std::optional<ChosenCodec> choose_video_codec(const MediaSection& section, const CodecPreferences& preferences) {
  if (preferences.want_h265) {
    for (const auto& c : section.codecs) {
      if (!iequals(c.name, "H265") || c.clock_rate != 90000) continue;
      return ChosenCodec{c, rtx_for(section, c.payload_type), {}, false};
    }
  }
  const RtpCodec* best = nullptr;
  int best_rank = 4;
  std::string best_profile;
  for (const auto& c : section.codecs) {
    if (!iequals(c.name, "H264") || c.clock_rate != 90000) continue;
    // Mode 0 sends one NAL unit per packet and no aggregation: no encoder here sends it, and the
    // packetiser needs FU-A for frames over the MTU (RFC 6184 6.2).
    if (fmtp_parameter(c.fmtp, "packetization-mode") != std::optional<std::string_view>("1")) continue;
    std::string profile = lower(fmtp_parameter(c.fmtp, "profile-level-id").value_or(""));
    const int rank = h264_rank(profile.empty() ? "420010" : profile, preferences.h264_profile);
    if (rank < best_rank) {
      best = &c;
      best_rank = rank;
      best_profile = std::move(profile);
    }
  }
  if (!best) return std::nullopt;
  return ChosenCodec{*best, rtx_for(section, best->payload_type), best_profile, best_rank == 3};
}

std::optional<ChosenCodec> choose_audio_codec(const MediaSection& section) {
  for (const auto& c : section.codecs) {
    // RFC 7587 4: Opus is always signalled as 48000/2, whatever it carries.
    if (iequals(c.name, "opus") && c.clock_rate == 48000 && c.channels == 2) {
      return ChosenCodec{c, rtx_for(section, c.payload_type), {}, false};
    }
  }
  return std::nullopt;
}

}  // namespace sluice::protocol::webrtc
