// Readers of yaml_fields.hpp: one typed value out of one node, or one error line.
#include "config/yaml_fields.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "config/units.hpp"

namespace sluice::config {

namespace {

namespace fs = std::filesystem;

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

// The closest known key if it is plausibly a typo ("gop_cahce" -> "gop_cache").
std::optional<std::string_view> suggest(std::string_view key, const std::vector<std::string_view>& known) {
  std::optional<std::string_view> best;
  size_t best_distance = 3;
  for (std::string_view k : known) {
    size_t d = edit_distance(lower(key), k);
    if (d < best_distance && d <= std::max<size_t>(1, k.size() / 3)) {
      best = k;
      best_distance = d;
    }
  }
  return best;
}

}  // namespace

std::string in_quotes(std::string_view s) { return "\"" + std::string(s) + "\""; }

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string child_path(const std::string& parent, std::string_view key) {
  return parent.empty() ? std::string(key) : parent + "." + std::string(key);
}

void FieldReader::error(const YamlMark& mark, const std::string& path, const std::string& what) {
  errors_.push_back(yaml_location(source_, mark) + ": " + (path.empty() ? "" : path + ": ") + what);
}

Section::Section(FieldReader& reader, const Field& self, std::vector<std::string_view> known) {
  if (self.value.is_null()) return;  // "log:" with nothing under it: all defaults.
  if (!self.value.is_map()) {
    reader.error(self, std::string("must be a map of settings, not ") + self.value.kind_name());
    valid_ = false;
    return;
  }
  for (const auto& [key, value] : self.value.entries()) {
    Field f{key, value, {}};
    if (!f.key.is_scalar()) {
      reader.error(f.key.mark(), self.path, "keys must be plain names");
      continue;
    }
    const std::string& name = f.key.scalar();
    f.path = child_path(self.path, name);
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      std::string what = "unknown key";
      if (auto s = suggest(name, known)) what += " (did you mean " + std::string(*s) + "?)";
      reader.error(f.key.mark(), f.path, what);
      continue;
    }
    auto dup = std::find_if(fields_.begin(), fields_.end(), [&](const Field& g) { return g.key.scalar() == name; });
    if (dup != fields_.end()) {
      reader.error(f.key.mark(), f.path,
                   "duplicate key (first set at line " + std::to_string(dup->key.mark().line + 1) + ")");
      continue;
    }
    fields_.push_back(std::move(f));
  }
}

bool FieldReader::scalar(const Field& f, const char* expected) {
  if (f.value.is_scalar()) return true;
  if (f.value.is_null()) {
    error(f, std::string("has no value (expected ") + expected + ")");
  } else {
    error(f, std::string("must be ") + expected + ", not " + f.value.kind_name());
  }
  return false;
}

bool FieldReader::read_bool(const Field& f, bool& out) {
  if (!scalar(f, "true or false")) return false;
  std::string v = lower(f.value.scalar());
  if (v == "true" || v == "yes" || v == "on") {
    out = true;
  } else if (v == "false" || v == "no" || v == "off") {
    out = false;
  } else {
    error(f, "must be true or false (got " + in_quotes(f.value.scalar()) + ")");
    return false;
  }
  return true;
}

bool FieldReader::read_u64(const Field& f, uint64_t& out, uint64_t min, uint64_t max) {
  if (!scalar(f, "an integer")) return false;
  const std::string& text = f.value.scalar();
  std::string_view digits = text;
  bool negative = !digits.empty() && digits.front() == '-';
  if (negative) digits.remove_prefix(1);
  uint64_t v = 0;
  bool ok = !digits.empty();
  for (char c : digits) {
    if (c < '0' || c > '9' || v > (UINT64_MAX - 9) / 10) {
      ok = false;
      break;
    }
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  if (!ok) {
    error(f, "must be an integer (got " + in_quotes(text) + ")");
    return false;
  }
  if (negative || v < min || v > max) {
    error(f, "must be " + std::to_string(min) + ".." + std::to_string(max) + " (got " + text + ")");
    return false;
  }
  out = v;
  return true;
}

bool FieldReader::read_size_u64(const Field& f, uint64_t& out, uint64_t min, uint64_t max) {
  if (!scalar(f, "a size such as 64MiB")) return false;
  auto v = parse_size(f.value.scalar());
  if (!v) {
    error(f, v.error().context);
    return false;
  }
  if (*v < min || *v > max) {
    error(f, "must be " + format_size(min) + ".." + format_size(max) + " (got " + f.value.scalar() + ")");
    return false;
  }
  out = *v;
  return true;
}

bool FieldReader::read_duration(const Field& f, Duration& out, Duration min, Duration max, bool zero_ok) {
  if (!scalar(f, "a duration such as 30s")) return false;
  auto v = parse_duration(f.value.scalar());
  if (!v) {
    error(f, v.error().context);
    return false;
  }
  if ((*v < min || *v > max) && !(zero_ok && v->count() == 0)) {
    error(f, std::string("must be ") + (zero_ok ? "0 or " : "") + format_duration(min) + ".." + format_duration(max) +
                 " (got " + f.value.scalar() + ")");
    return false;
  }
  out = *v;
  return true;
}

bool FieldReader::read_string(const Field& f, std::string& out) {
  if (!scalar(f, "a string")) return false;
  out = f.value.scalar();
  return true;
}

bool FieldReader::read_path(const Field& f, std::string& out) {
  std::string text;
  if (!read_string(f, text)) return false;
  if (text.empty()) {
    error(f, "must not be empty");
    return false;
  }
  fs::path p(text);
  if (p.is_relative()) p = fs::path(base_dir_) / p;
  std::string s = p.lexically_normal().string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  out = s;
  return true;
}

std::vector<Field> FieldReader::items(const Field& f, const char* expected) {
  std::vector<Field> out;
  if (f.value.is_sequence()) {
    for (size_t i = 0; i < f.value.size(); ++i) {
      out.push_back(Field{f.key, f.value.item(i), f.path + "[" + std::to_string(i) + "]"});
    }
  } else if (f.value.is_scalar()) {
    out.push_back(f);
  } else if (f.value.is_null()) {
    error(f, std::string("has no value (expected ") + expected + ", or a list of them)");
  } else {
    error(f, std::string("must be ") + expected + " or a list of them, not " + f.value.kind_name());
  }
  return out;
}

bool FieldReader::read_listen(const Field& f, std::vector<ListenAddress>& out) {
  std::vector<ListenAddress> list;
  bool ok = true;
  std::vector<ListenSite> sites;
  for (const Field& item : items(f, "an address:port")) {
    if (!scalar(item, "an address:port")) {
      ok = false;
      continue;
    }
    auto a = parse_listen_address(item.value.scalar());
    if (!a) {
      error(item, a.error().context);
      ok = false;
      continue;
    }
    if (std::find(list.begin(), list.end(), *a) != list.end()) {
      error(item, "duplicate address " + a->to_string());
      ok = false;
      continue;
    }
    list.push_back(*a);
    sites.push_back(ListenSite{*a, item.mark(), item.path});
  }
  if (f.value.is_sequence() && f.value.size() == 0) {
    error(f, "needs at least one address");
    return false;
  }
  if (!ok || list.empty()) return false;
  out = std::move(list);
  listen_sites_.insert(listen_sites_.end(), sites.begin(), sites.end());
  return true;
}

bool FieldReader::read_cidrs(const Field& f, std::vector<Cidr>& out) {
  std::vector<Cidr> list;
  bool ok = true;
  // An explicit empty list is allowed: it means "anyone".
  if (f.value.is_sequence() && f.value.size() == 0) {
    out.clear();
    return true;
  }
  for (const Field& item : items(f, "a CIDR block such as 10.0.0.0/8")) {
    if (!scalar(item, "a CIDR block such as 10.0.0.0/8")) {
      ok = false;
      continue;
    }
    auto c = parse_cidr(item.value.scalar());
    if (!c) {
      error(item, c.error().context);
      ok = false;
      continue;
    }
    list.push_back(*c);
  }
  if (!ok) return false;
  out = std::move(list);
  return true;
}

bool FieldReader::read_string_list(const Field& f, std::vector<std::string>& out) {
  std::vector<std::string> list;
  bool ok = true;
  if (f.value.is_sequence() && f.value.size() == 0) {
    out.clear();
    return true;
  }
  for (const Field& item : items(f, "a string")) {
    std::string s;
    if (!read_string(item, s)) {
      ok = false;
      continue;
    }
    list.push_back(std::move(s));
  }
  if (!ok) return false;
  out = std::move(list);
  return true;
}

}  // namespace sluice::config
