#include "decide/ledger.h"

#include <algorithm>

#include "util/strings.h"

namespace mlsup::decide {

std::vector<std::string> excluded_nodes(const std::vector<Exclusion>& ledger, double now, int cap) {
  std::vector<Exclusion> live;
  for (const auto& e : ledger)
    if (e.until > now) live.push_back(e);
  std::stable_sort(live.begin(), live.end(), [](const Exclusion& a, const Exclusion& b) { return a.since > b.since; });
  std::vector<std::string> nodes;
  for (const auto& e : live) {
    if (cap >= 0 && static_cast<int>(nodes.size()) >= cap) break;
    if (std::find(nodes.begin(), nodes.end(), e.node) == nodes.end()) nodes.push_back(e.node);
  }
  return nodes;
}

std::string exclusion_words(const std::string& reason, const std::vector<std::string>& gpus, const std::string& ended_by) {
  return reason + (gpus.empty() ? "" : "; GPUs " + util::join(gpus, ", ")) + (ended_by.empty() ? "" : "; ended early: " + ended_by);
}

int exclusion_cap(int configured, int usable_nodes, int job_nodes) {
  if (configured > 0) return configured;
  return std::max(0, usable_nodes - job_nodes);
}

}  // namespace mlsup::decide
