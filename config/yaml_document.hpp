// The one door to the YAML library: a parsed document as read-only YamlNode handles, the
// "<file>:<line>:<column>" form of a position, and the guard that turns the library's exceptions
// into config errors. Only yaml_document.cpp includes the library; the rest of config/ (and every
// header) sees these types instead.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.hpp"
#include "config/config.hpp"

namespace sluice::config {

// Where a node starts in the text, 0-based. line < 0: no position (a node the file did not spell).
struct YamlMark {
  int line = -1;
  int column = -1;
};

// "<source>:<line>:<column>" (1-based), or just "<source>" for a mark without a position.
std::string yaml_location(const std::string& source, const YamlMark& mark);

// A handle on one node of a parsed document; copies refer to the same node. A default-constructed
// handle is an empty (null) node without a position. Nodes are only looked at when asked, so a
// document full of aliases costs no more than the parts the schema reads.
class YamlNode {
 public:
  struct Impl;  // Defined in yaml_document.cpp only.

  YamlNode() = default;
  explicit YamlNode(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

  bool is_null() const;  // "key:" with nothing after it, "~", "null", an empty document
  bool is_scalar() const;
  bool is_sequence() const;
  bool is_map() const;
  // "a list", "a map", "a single value" or "empty", for messages.
  const char* kind_name() const;
  // The text of a scalar (empty for other nodes); valid while a handle on the node exists.
  const std::string& scalar() const;
  YamlMark mark() const;
  // The number of items of a sequence or entries of a map; 0 for other nodes.
  size_t size() const;
  // Item i (< size()) of a sequence.
  YamlNode item(size_t i) const;
  // The key/value pairs of a map, in document order.
  std::vector<std::pair<YamlNode, YamlNode>> entries() const;

 private:
  std::shared_ptr<const Impl> impl_;
};

// Parses `yaml` and returns what `build` makes of its root node. A syntax error, and any
// exception thrown on the way (the YAML library's or another), becomes Error{Errc::Config}
// placed at "<source_name>:<line>:<column>" when the position is known.
Result<Config> read_yaml(std::string_view yaml, const std::string& source_name,
                         const std::function<Result<Config>(const YamlNode& root)>& build);

}  // namespace sluice::config
