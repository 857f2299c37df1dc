// For unit tests that check files with ffmpeg/ffprobe (tests/unit/media/record/mp4_ffprobe_test.cpp,
// tests/unit/media/fmp4/fmp4_ffprobe_test.cpp): run ffmpeg, and read back every packet ffprobe
// finds, per stream.
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "unit/media/tool_files.hpp"

namespace sluice::test {

// ffmpeg with `args`; the test fails when it does.
inline void ffmpeg(const std::string& args) {
  const std::string cmd = "ffmpeg -v error -y " + args + " 2>&1";
  INFO(cmd);
  REQUIRE(run(cmd).has_value());
}

struct ProbedPacket {
  double pts_ms = 0;  // ffprobe prints seconds with 6 decimals: the same text, the same double
  double dts_ms = 0;
  uint32_t size = 0;
  bool key = false;
  std::string md5;
};

// Each stream's packets ("video", "audio"), in the order ffprobe reads them. Records are split at
// "codec_type=", as side data may break one over several lines.
inline std::map<std::string, std::vector<ProbedPacket>> probe_packets(const std::string& path) {
  auto out =
      run("ffprobe -v error -show_data_hash md5 -of compact=p=0 -show_entries "
          "packet=codec_type,pts_time,dts_time,size,flags,data_hash '" +
          path + "'");
  REQUIRE(out.has_value());
  std::map<std::string, std::vector<ProbedPacket>> streams;
  ProbedPacket* p = nullptr;
  std::istringstream in(*out);
  std::string line, kv;
  while (std::getline(in, line)) {
    std::istringstream parts(line);
    while (std::getline(parts, kv, '|')) {
      const auto eq = kv.find('=');
      if (eq == std::string::npos) continue;
      const std::string k = kv.substr(0, eq), v = kv.substr(eq + 1);
      if (k == "codec_type") p = &streams[v].emplace_back();
      if (!p) continue;
      if (k == "pts_time" && v != "N/A") p->pts_ms = std::stod(v) * 1000;
      if (k == "dts_time" && v != "N/A") p->dts_ms = std::stod(v) * 1000;
      if (k == "size") p->size = static_cast<uint32_t>(std::stoul(v));
      if (k == "flags") p->key = !v.empty() && v[0] == 'K';
      if (k == "data_hash") p->md5 = v.substr(v.find(':') + 1);
    }
  }
  return streams;
}

}  // namespace sluice::test
