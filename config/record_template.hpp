// The name of a recording's file below record.dir (record.path, docs/recording.md). Pure string
// work, shared by the config check (at load) and the recorder (each new file).
//
// Rules:
//  1. Variables: {app}, {stream} (its '/' become '_', so one stream is one name) and {seq} (the
//     file's number within the publication: 1, then 2... at each segment cut).
//  2. strftime conversions of the file's start time in UTC, from a fixed list that cannot make a
//     '/' or an empty name: %Y %y %m %d %e %H %I %M %S %j %u %w %V %G %a %A %b %B %p %F %T %s %%.
//  3. The template is relative, names at least {stream}, and has no empty, "." or ".." component:
//     with stream names validated (no "." or ".." segments), no expansion can leave the directory.
//  4. The server adds ".flv" (and ".flv.part" while recording) to the expansion.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace sluice::config {

// Empty when the template is usable, else why not (for the config error).
std::string check_record_template(std::string_view tmpl);

struct RecordNameParts {
  std::string_view app;
  std::string_view stream;
  uint32_t seq = 1;
  int64_t start_unix = 0;
};

// The expansion of a template that passed check_record_template().
std::string expand_record_template(std::string_view tmpl, const RecordNameParts& parts);

// A relative path with no empty, "." or ".." component: the recorder checks each expansion with
// it again before creating anything (defence in depth for rule 3).
bool is_confined_relative_path(std::string_view path);

}  // namespace sluice::config
