#include "decide/evidence_nodes.h"

#include <algorithm>
#include <charconv>
#include <regex>

namespace mlsup::decide {
namespace {

bool is_ipv4(std::string_view text) {
  static const std::regex ipv4(R"((\d{1,3}\.){3}\d{1,3})");
  return std::regex_match(text.begin(), text.end(), ipv4);
}

// A host name's short form ("gpu-3" of "gpu-3.cluster.local"); an address as it is.
std::string short_name(std::string_view name) {
  if (is_ipv4(name) || name.find(':') != std::string_view::npos) return std::string(name);
  return std::string(name.substr(0, name.find('.')));
}

// True when one of the names of a node is address, whole or in short form.
bool known_as(const std::string& node, const std::vector<std::string>& names, std::string_view address) {
  const std::string wanted = short_name(address);
  if (node == address || short_name(node) == wanted) return true;
  return std::any_of(names.begin(), names.end(),
                     [&](const std::string& n) { return n == address || short_name(n) == wanted; });
}

}  // namespace

std::vector<std::string> block_layout(const std::vector<std::string>& nodes, int ranks_per_node) {
  std::vector<std::string> out;
  for (const auto& n : nodes) out.insert(out.end(), static_cast<std::size_t>(std::max(ranks_per_node, 0)), n);
  return out;
}

std::optional<std::string> node_of_address(const std::map<std::string, std::vector<std::string>>& addresses,
                                           std::string_view address) {
  if (address.empty()) return std::nullopt;
  std::optional<std::string> found;
  for (const auto& [node, names] : addresses) {
    if (!known_as(node, names, address)) continue;
    if (found) return std::nullopt;  // two nodes share the name: neither is blamed
    found = node;
  }
  return found;
}

std::optional<std::string> node_of_rank(const std::vector<std::string>& rank_nodes, std::string_view rank) {
  std::size_t r = 0;
  const auto [end, ec] = std::from_chars(rank.data(), rank.data() + rank.size(), r);
  if (rank.empty() || ec != std::errc() || end != rank.data() + rank.size() || r >= rank_nodes.size()) return std::nullopt;
  if (rank_nodes[r].empty()) return std::nullopt;  // a rank the layout does not place
  return rank_nodes[r];
}

std::optional<std::string> blamed_node(const Finding& f, const Placement& where) {
  if (f.action == RuleAction::RetryNoBlame) return std::nullopt;
  switch (f.blame) {
    case Blame::None:
      return std::nullopt;
    case Blame::NodeInLine:
      return node_of_address(where.addresses, f.captured);
    case Blame::RankInLine:
      return node_of_rank(where.rank_nodes, f.captured);
    case Blame::NodeOfLog:
      return where.log_node;
  }
  return std::nullopt;
}

}  // namespace mlsup::decide
