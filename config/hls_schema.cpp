#include "config/hls_schema.hpp"

#include <yaml-cpp/yaml.h>

#include "config/units.hpp"

namespace sluice::config {

namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

const char* variant_name(HlsVariant v) {
  switch (v) {
    case HlsVariant::MpegTs: return "mpegts";
    case HlsVariant::Fmp4: return "fmp4";
    case HlsVariant::LowLatency: return "low-latency";
  }
  return "low-latency";
}

}  // namespace

void load_hls(FieldReader& r, const Field& self, AppConfig& app) {
  HlsConfig& hls = app.hls;
  if (!self.value.is_map()) {
    r.read_bool(self, hls.enabled);
    return;
  }
  Section s(r, self, {"enabled", "variant", "segment", "part", "window", "on_demand", "idle_close", "dir"});
  if (!s.valid()) return;
  hls.enabled = true;  // an hls map turns HLS on unless it says otherwise
  if (auto f = s.take("enabled")) r.read_bool(*f, hls.enabled);
  if (auto f = s.take("variant")) {
    r.read_choice(*f, "mpegts, fmp4 or low-latency",
                  {{"mpegts", HlsVariant::MpegTs},
                   {"ts", HlsVariant::MpegTs},
                   {"fmp4", HlsVariant::Fmp4},
                   {"low-latency", HlsVariant::LowLatency},
                   {"lowlatency", HlsVariant::LowLatency},
                   {"ll", HlsVariant::LowLatency}},
                  hls.variant);
  }
  auto segment = s.take("segment");
  if (segment) r.read_duration(*segment, hls.segment, seconds(1), seconds(60), false);
  if (auto f = s.take("part")) {
    if (r.read_duration(*f, hls.part, milliseconds(50), seconds(30), false) && hls.part * 2 > hls.segment) {
      r.error(*f, "must be at most half the segment duration (" + format_duration(hls.segment) + ")");
    }
  }
  if (auto f = s.take("window")) r.read_uint(*f, hls.window, 2, 100);
  if (auto f = s.take("on_demand")) r.read_bool(*f, hls.on_demand);
  if (auto f = s.take("idle_close")) r.read_duration(*f, hls.idle_close, seconds(5), seconds(3600), false);
  if (auto f = s.take("dir")) r.read_path(*f, hls.dir);
}

void emit_hls(YAML::Emitter& out, const HlsConfig& hls) {
  out << YAML::Key << "hls" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "enabled" << YAML::Value << hls.enabled;
  out << YAML::Key << "variant" << YAML::Value << variant_name(hls.variant);
  out << YAML::Key << "segment" << YAML::Value << format_duration(hls.segment);
  out << YAML::Key << "part" << YAML::Value << format_duration(hls.part);
  out << YAML::Key << "window" << YAML::Value << hls.window;
  out << YAML::Key << "on_demand" << YAML::Value << hls.on_demand;
  out << YAML::Key << "idle_close" << YAML::Value << format_duration(hls.idle_close);
  if (!hls.dir.empty()) out << YAML::Key << "dir" << YAML::Value << hls.dir;
  out << YAML::EndMap;
}

}  // namespace sluice::config
