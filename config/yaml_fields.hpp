// Reading typed values out of YAML nodes: a key with its value (Field), the keys of one map
// (Section: unknown and duplicate keys, typo suggestions) and one reader per value type of
// docs/configuration.md, "Value types". Internal to config/.
//
// A reader never stops the load: on a bad value it records one
// "<file>:<line>:<column>: <key.path>: <what is wrong>" line in the FieldReader, leaves `out` alone
// (so the default stays in place) and returns false. One run therefore reports every mistake.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/address.hpp"
#include "config/config.hpp"
#include "config/yaml_document.hpp"

namespace sluice::config {

std::string in_quotes(std::string_view s);
std::string lower(std::string_view s);

// A key/value pair of a map, with the dotted path used in messages.
struct Field {
  YamlNode key;
  YamlNode value;
  std::string path;

  // A null value's mark points past it (often the next line); the key is where the user looks.
  YamlMark mark() const { return value.is_null() ? key.mark() : value.mark(); }
};

std::string child_path(const std::string& parent, std::string_view key);

// Where the file spelled out a listen address, so that a later check can point at it.
struct ListenSite {
  ListenAddress address;
  YamlMark mark;
  std::string path;
};

class FieldReader {
 public:
  // source names the file in messages; read_path resolves relative paths against base_dir.
  FieldReader(std::string source, std::string base_dir) : source_(std::move(source)), base_dir_(std::move(base_dir)) {}

  const std::vector<std::string>& errors() const { return errors_; }
  // Every address read_listen accepted, in file order.
  const std::vector<ListenSite>& listen_sites() const { return listen_sites_; }

  void error(const YamlMark& mark, const std::string& path, const std::string& what);
  void error(const Field& f, const std::string& what) { error(f.mark(), f.path, what); }

  // Whether the value is a single value; else an error naming `expected`.
  bool scalar(const Field& f, const char* expected);
  bool read_bool(const Field& f, bool& out);
  template <typename T>
  bool read_uint(const Field& f, T& out, uint64_t min, uint64_t max) {
    uint64_t v = 0;
    if (!read_u64(f, v, min, max)) return false;
    out = static_cast<T>(v);
    return true;
  }
  template <typename T>
  bool read_size(const Field& f, T& out, uint64_t min, uint64_t max) {
    uint64_t v = 0;
    if (!read_size_u64(f, v, min, max)) return false;
    out = static_cast<T>(v);
    return true;
  }
  // One of the names in `choices` (compared lowercased; aliases may be among them): `out` takes its
  // value. Else the error "must be EXPECTED (got "...")": `expected` names the canonical ones.
  template <typename E>
  bool read_choice(const Field& f, const char* expected, std::initializer_list<std::pair<std::string_view, E>> choices,
                   E& out) {
    if (!scalar(f, expected)) return false;
    const std::string v = lower(f.value.scalar());
    for (const auto& [name, value] : choices) {
      if (v == name) {
        out = value;
        return true;
      }
    }
    error(f, std::string("must be ") + expected + " (got " + in_quotes(f.value.scalar()) + ")");
    return false;
  }
  // zero_ok: 0 is accepted outside min..max (it means "off").
  bool read_duration(const Field& f, Duration& out, Duration min, Duration max, bool zero_ok);
  bool read_string(const Field& f, std::string& out);
  // Non-empty; made absolute against base_dir and normalised, without a trailing '/'.
  bool read_path(const Field& f, std::string& out);
  bool read_listen(const Field& f, std::vector<ListenAddress>& out);
  bool read_cidrs(const Field& f, std::vector<Cidr>& out);
  bool read_string_list(const Field& f, std::vector<std::string>& out);
  // Each item of a single value or a list, with "path[i]" paths for list items.
  std::vector<Field> items(const Field& f, const char* expected);

 private:
  bool read_u64(const Field& f, uint64_t& out, uint64_t min, uint64_t max);
  bool read_size_u64(const Field& f, uint64_t& out, uint64_t min, uint64_t max);

  std::string source_;
  std::string base_dir_;
  std::vector<std::string> errors_;
  std::vector<ListenSite> listen_sites_;
};

// The keys of one YAML map: unknown and duplicate keys are reported on construction, then the
// schema take()s the keys it knows.
class Section {
 public:
  Section(FieldReader& reader, const Field& self, std::vector<std::string_view> known);

  std::optional<Field> take(std::string_view key) const {
    for (const Field& f : fields_) {
      if (f.key.scalar() == key) return f;
    }
    return std::nullopt;
  }
  // False when the value was not a map at all (already reported).
  bool valid() const { return valid_; }

 private:
  std::vector<Field> fields_;
  bool valid_ = true;
};

}  // namespace sluice::config
