// load.hpp's entry points. The work is split by job:
//  - yaml_document.cpp: the YAML library (parsing, syntax errors, node access); nothing else
//    includes it;
//  - yaml_fields.cpp: typed values out of nodes, each problem as one "file:line:column: key: what"
//    line;
//  - schema.cpp: the sections and keys of the file, into config.hpp's structs;
//  - checks.cpp: the rules between settings.
// Here: reading the file, the base directory, and joining the problems into one error.
#include "config/load.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "config/default_config.hpp"
#include "config/schema.hpp"
#include "config/yaml_document.hpp"
#include "config/yaml_fields.hpp"

namespace sluice::config {

namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxErrors = 20;                // Past this, "... and N more".
constexpr uintmax_t kMaxFileSize = 1024 * 1024;  // A config file is small; refuse to slurp a huge one.

std::string join_errors(const std::vector<std::string>& errors) {
  std::string out;
  for (size_t i = 0; i < errors.size() && i < kMaxErrors; ++i) {
    if (i) out += "\n";
    out += errors[i];
  }
  if (errors.size() > kMaxErrors) out += "\n... and " + std::to_string(errors.size() - kMaxErrors) + " more errors";
  return out;
}

std::string absolute_dir(const std::string& dir) {
  std::error_code ec;
  fs::path p = dir.empty() ? fs::current_path(ec) : fs::absolute(fs::path(dir), ec);
  if (ec) p = fs::path(dir.empty() ? "." : dir);
  std::string s = p.lexically_normal().string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

}  // namespace

Result<Config> load_string(std::string_view yaml, const std::string& source_name, const std::string& base_dir) {
  std::string base = absolute_dir(base_dir);
  return read_yaml(yaml, source_name, [&](const YamlNode& root) -> Result<Config> {
    FieldReader reader(source_name, base);
    Config cfg = read_config(reader, root);
    if (!reader.errors().empty()) return Error(Errc::Config, join_errors(reader.errors()));
    cfg.source = source_name;
    cfg.base_dir = base;
    return cfg;
  });
}

Result<Config> load_file(const std::string& path) {
  std::error_code ec;
  auto status = fs::status(path, ec);
  if (ec) return Error(Errc::Config, path + ": cannot read config file: " + ec.message());
  if (fs::is_directory(status)) return Error(Errc::Config, path + ": is a directory, not a config file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error(Errc::Config, path + ": cannot read config file: " + std::strerror(errno));
  auto size = fs::file_size(path, ec);
  if (!ec && size > kMaxFileSize) {
    return Error(Errc::Config, path + ": config file too large (" + std::to_string(size) + " bytes, at most 1MiB)");
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Error(Errc::Config, path + ": cannot read config file: " + std::strerror(errno));
  fs::path abs = fs::absolute(fs::path(path), ec);
  std::string dir = ec ? std::string(".") : abs.parent_path().string();
  return load_string(text.str(), path, dir);
}

Result<Config> load_default() { return load_string(default_config_yaml(), std::string(kEmbeddedSourceName), ""); }

}  // namespace sluice::config
