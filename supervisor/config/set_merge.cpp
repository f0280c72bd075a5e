// Campaign sets, the pure tree operations: overrides laid on a base config, a matrix crossed.
#include <set>

#include "config/campaign_set.h"
#include "util/strings.h"

namespace mlsup::config {
namespace {

// The value of key in the mapping m (an undefined node when absent), found by text.
YAML::Node lookup(const YAML::Node& m, const std::string& key) {
  for (const auto& item : m)
    if (item.first.Scalar() == key) return item.second;
  return YAML::Node(YAML::NodeType::Undefined);
}

// A scalar as part of a campaign name: letters, digits, '.', '_' and '-' kept, others '_'.
std::string name_part(const std::string& text) {
  std::string out;
  for (char ch : text) {
    const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '.' ||
                    ch == '_' || ch == '-';
    out += ok ? ch : '_';
  }
  return out;
}

// A value for a matrix name: a scalar as written, anything else by its flow text.
std::string value_text(const YAML::Node& v) {
  if (v.IsScalar()) return v.Scalar();
  YAML::Emitter e;
  e << YAML::Flow << v;
  return e.c_str();
}

// A tree holding value at the dotted path ("vars.lr" -> {vars: {lr: value}}), the value's node kept.
YAML::Node at_path(const std::string& path, const YAML::Node& value) {
  const auto parts = util::split(path, '.');
  YAML::Node tree = value;
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
    YAML::Node up(YAML::NodeType::Map);
    up.force_insert(*it, tree);
    tree.reset(up);  // rebinds tree (assignment would write up into the node tree refers to)
  }
  return tree;
}

}  // namespace

YAML::Node merge_nodes(const YAML::Node& base, const YAML::Node& over) {
  if (!over.IsDefined() || over.IsNull()) return base;
  if (!base.IsDefined() || !base.IsMap() || !over.IsMap()) return over;
  YAML::Node out(YAML::NodeType::Map);
  for (const auto& item : base) {
    const auto o = lookup(over, item.first.Scalar());
    if (!o.IsDefined()) out.force_insert(item.first, item.second);
    else if (!o.IsNull()) out.force_insert(item.first, merge_nodes(item.second, o));
  }
  for (const auto& item : over)
    if (!lookup(base, item.first.Scalar()).IsDefined() && !item.second.IsNull()) out.force_insert(item.first, item.second);
  return out;
}

std::vector<MatrixCell> matrix_cells(const YAML::Node& matrix) {
  std::vector<std::pair<std::string, YAML::Node>> axes;
  std::map<std::string, int> last_parts;
  for (const auto& item : matrix) {
    axes.emplace_back(item.first.Scalar(), item.second);
    ++last_parts[util::split(item.first.Scalar(), '.').back()];
  }
  std::vector<MatrixCell> cells{{"", YAML::Node(YAML::NodeType::Map)}};
  for (const auto& [key, values] : axes) {
    const std::string last = util::split(key, '.').back();
    const std::string label = last_parts[last] > 1 ? key : last;
    std::vector<MatrixCell> crossed;
    for (const auto& cell : cells)
      for (const auto& v : values)
        crossed.push_back({cell.suffix + (cell.suffix.empty() ? "" : ".") + name_part(label + "_" + value_text(v)),
                           merge_nodes(cell.overrides, at_path(key, v))});
    cells = std::move(crossed);
  }
  return cells;
}

}  // namespace mlsup::config
