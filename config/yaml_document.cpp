#include "config/yaml_document.hpp"

#include <yaml-cpp/yaml.h>

#include <sstream>

namespace sluice::config {

struct YamlNode::Impl {
  explicit Impl(YAML::Node n) : node(std::move(n)) {}
  YAML::Node node;
};

namespace {

// A default-constructed YamlNode stands for a default-constructed YAML::Node: null, no mark.
const YAML::Node& node_of(const std::shared_ptr<const YamlNode::Impl>& impl) {
  static const YAML::Node kEmpty;
  return impl ? impl->node : kEmpty;
}

YamlNode wrap(const YAML::Node& node) { return YamlNode(std::make_shared<const YamlNode::Impl>(node)); }

YamlMark to_mark(const YAML::Mark& mark) { return YamlMark{mark.line, mark.column}; }

// "(IPv6 listen addresses must be quoted)" when a syntax error sits on a line like "listen: [::]:1935".
std::string syntax_hint(std::string_view yaml, int line) {
  std::istringstream in{std::string(yaml)};
  std::string text;
  for (int i = 0; i <= line && std::getline(in, text); ++i) {
  }
  size_t open = text.find('[');
  size_t close = text.find("]:", open == std::string::npos ? 0 : open);
  if (open != std::string::npos && close != std::string::npos &&
      text.find_first_not_of("0123456789abcdefABCDEF:.", open + 1) == close) {
    return " (an IPv6 address in brackets must be quoted: \"[::]:1935\")";
  }
  return "";
}

}  // namespace

std::string yaml_location(const std::string& source, const YamlMark& mark) {
  if (mark.line < 0) return source;
  return source + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
}

bool YamlNode::is_null() const { return node_of(impl_).IsNull(); }
bool YamlNode::is_scalar() const { return node_of(impl_).IsScalar(); }
bool YamlNode::is_sequence() const { return node_of(impl_).IsSequence(); }
bool YamlNode::is_map() const { return node_of(impl_).IsMap(); }

const char* YamlNode::kind_name() const {
  switch (node_of(impl_).Type()) {
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Map: return "a map";
    case YAML::NodeType::Scalar: return "a single value";
    default: return "empty";
  }
}

const std::string& YamlNode::scalar() const { return node_of(impl_).Scalar(); }
YamlMark YamlNode::mark() const { return to_mark(node_of(impl_).Mark()); }
size_t YamlNode::size() const { return node_of(impl_).size(); }
YamlNode YamlNode::item(size_t i) const { return wrap(node_of(impl_)[i]); }

std::vector<std::pair<YamlNode, YamlNode>> YamlNode::entries() const {
  std::vector<std::pair<YamlNode, YamlNode>> out;
  const YAML::Node& node = node_of(impl_);
  for (auto it = node.begin(); it != node.end(); ++it) out.emplace_back(wrap(it->first), wrap(it->second));
  return out;
}

Result<Config> read_yaml(std::string_view yaml, const std::string& source_name,
                         const std::function<Result<Config>(const YamlNode& root)>& build) {
  try {
    YAML::Node root;
    try {
      root = YAML::Load(std::string(yaml));
    } catch (const YAML::ParserException& e) {
      return Error(Errc::Config, yaml_location(source_name, to_mark(e.mark)) + ": YAML syntax error: " + e.msg +
                                     syntax_hint(yaml, e.mark.line));
    }
    return build(wrap(root));
  } catch (const YAML::Exception& e) {
    return Error(Errc::Config, yaml_location(source_name, to_mark(e.mark)) + ": " + e.msg);
  } catch (const std::exception& e) {
    return Error(Errc::Config, source_name + ": " + e.what());
  }
}

}  // namespace sluice::config
