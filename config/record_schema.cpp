#include "config/record_schema.hpp"

#include "config/units.hpp"

namespace sluice::config {

void load_record(FieldReader& r, const Field& self, AppConfig& app) {
  Section s(r, self, {"mode", "dir", "segment"});
  if (!s.valid()) return;
  app.record = true;  // a record map records unless it says mode: off
  if (auto f = s.take("mode")) {
    if (r.scalar(*f, "off or all")) {
      std::string v = lower(f->value.scalar());
      if (v == "off") {
        app.record = false;
      } else if (v != "all") {
        r.error(*f, "must be off or all (got " + in_quotes(f->value.scalar()) + ")");
      }
    }
  }
  if (auto f = s.take("dir")) r.read_path(*f, app.record_path);
  if (auto seg = s.take("segment")) {
    Section g(r, *seg, {"duration", "size"});
    if (auto f = g.take("duration")) {
      r.read_duration(*f, app.record_segment_duration, std::chrono::seconds(1), std::chrono::hours(24 * 7), true);
    }
    if (auto f = g.take("size")) {
      uint64_t size = 0;
      if (r.read_size(*f, size, 0, 1024 * kGiB)) {
        if (size != 0 && size < kMiB) {
          r.error(*f, "must be 0 (no size limit) or at least 1MiB");
        } else {
          app.record_segment_bytes = size;
        }
      }
    }
  }
}

}  // namespace sluice::config
