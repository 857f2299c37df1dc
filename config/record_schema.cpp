#include "config/record_schema.hpp"

#include "config/record_template.hpp"
#include "config/units.hpp"

namespace sluice::config {

namespace {

void load_segment(FieldReader& r, const Field& self, RecordConfig& rec) {
  Section g(r, self, {"duration", "size"});
  if (!g.valid()) return;
  if (auto f = g.take("duration")) {
    r.read_duration(*f, rec.segment_duration, std::chrono::seconds(1), std::chrono::hours(24 * 7), true);
  }
  if (auto f = g.take("size")) {
    uint64_t size = 0;
    if (r.read_size(*f, size, 0, 1024 * kGiB)) {
      if (size != 0 && size < kMiB) {
        r.error(*f, "must be 0 (no size limit) or at least 1MiB");
      } else {
        rec.segment_bytes = size;
      }
    }
  }
}

// keep: 7d (an age), or keep: { age: 7d, size: 500GiB }.
void load_keep(FieldReader& r, const Field& self, RecordConfig& rec) {
  const Duration kMaxAge = std::chrono::hours(24 * 3650);
  if (!self.value.is_map()) {
    r.read_duration(self, rec.keep_age, std::chrono::minutes(1), kMaxAge, true);
    return;
  }
  Section k(r, self, {"age", "size"});
  if (!k.valid()) return;
  if (auto f = k.take("age")) r.read_duration(*f, rec.keep_age, std::chrono::minutes(1), kMaxAge, true);
  if (auto f = k.take("size")) {
    uint64_t size = 0;
    if (r.read_size(*f, size, 0, 1024 * 1024 * kGiB)) {
      if (size != 0 && size < 16 * kMiB) {
        r.error(*f, "must be 0 (no size bound) or at least 16MiB");
      } else {
        rec.keep_bytes = size;
      }
    }
  }
}

}  // namespace

void load_record(FieldReader& r, const Field& self, AppConfig& app) {
  Section s(r, self, {"mode", "dir", "path", "segment", "keep", "mp4"});
  if (!s.valid()) return;
  RecordConfig& rec = app.record;
  rec.mode = RecordMode::All;  // a record map records unless it says otherwise
  if (auto f = s.take("mode")) {
    r.read_choice(*f, "off, all or manual",
                  {{"off", RecordMode::Off}, {"all", RecordMode::All}, {"manual", RecordMode::Manual}}, rec.mode);
  }
  if (auto f = s.take("dir")) r.read_path(*f, rec.dir);
  if (auto f = s.take("path")) {
    std::string tmpl;
    if (r.read_string(*f, tmpl)) {
      std::string why = check_record_template(tmpl);
      if (why.empty()) {
        rec.path = std::move(tmpl);
      } else {
        r.error(*f, why);
      }
    }
  }
  if (auto f = s.take("segment")) load_segment(r, *f, rec);
  if (auto f = s.take("keep")) load_keep(r, *f, rec);
  if (auto f = s.take("mp4")) r.read_bool(*f, rec.mp4);
}

}  // namespace sluice::config
