#include "decide/capacity.h"

#include <algorithm>
#include <map>

#include "util/strings.h"

namespace mlsup::decide {
namespace {

bool listed(const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); }

bool in_partition(const slurm::Node& n, const std::string& partition) {
  return partition.empty() || n.partitions.empty() || listed(n.partitions, partition);
}

// Why Slurm cannot give the node to the job ("" when it can).
std::string unusable_because(const slurm::Node& n, const std::vector<std::string>& excluded) {
  const std::string reason = n.reason.empty() ? "" : " (" + n.reason + ")";
  if (n.state == "DOWN") return "down" + reason;
  if (n.drain) return "drained" + reason;
  if (n.state == "FUTURE") return "not yet in service (FUTURE)";
  if (listed(excluded, n.name)) return "excluded";
  return "";
}

}  // namespace

Capacity capacity(int asked, const std::vector<slurm::Node>& nodes, const std::string& partition,
                  const std::vector<std::string>& excluded) {
  Capacity c{asked, 0, {}};
  std::map<std::string, std::vector<std::string>> by_why;
  std::vector<std::string> order;  // the reasons in the order their first node came
  for (const auto& n : nodes) {
    if (!in_partition(n, partition)) continue;
    const std::string why = unusable_because(n, excluded);
    if (why.empty()) {
      ++c.usable;
      continue;
    }
    if (!by_why.contains(why)) order.push_back(why);
    by_why[why].push_back(n.name);
  }
  for (const auto& why : order) {
    const auto& names = by_why[why];
    constexpr std::size_t kShown = 6;
    std::vector<std::string> shown(names.begin(), names.begin() + static_cast<long>(std::min(kShown, names.size())));
    const std::string more = names.size() > kShown ? " and " + std::to_string(names.size() - kShown) + " more" : "";
    c.unusable.push_back(util::join(shown, ", ") + more + " " + why);
  }
  return c;
}

std::string shortfall_text(const Capacity& c) {
  std::string text = "asks " + std::to_string(c.asked) + " node" + (c.asked == 1 ? "" : "s") + ", " +
                     std::to_string(c.usable) + " usable";
  if (!c.unusable.empty()) text += ": " + util::join(c.unusable, "; ");
  return text;
}

}  // namespace mlsup::decide
