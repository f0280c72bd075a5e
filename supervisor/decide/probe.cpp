#include "decide/probe.h"

#include <algorithm>

#include "util/strings.h"

namespace mlsup::decide {
namespace {

bool in(const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// The probed nodes that did not answer.
std::vector<std::string> unanswered(const ProbeFacts& f) {
  std::vector<std::string> out;
  for (const auto& n : f.probed)
    if (in(f.silent, n)) out.push_back(n);
  return out;
}

// Of nodes, those Slurm itself marks not responding or down.
std::vector<std::string> confirmed(const std::vector<std::string>& nodes, const ProbeFacts& f) {
  std::vector<std::string> out;
  for (const auto& n : nodes)
    if (in(f.slurm_not_responding, n)) out.push_back(n);
  return out;
}

std::string listed(const std::vector<std::string>& nodes) {
  constexpr std::size_t kShown = 8;
  std::vector<std::string> shown(nodes.begin(), nodes.begin() + static_cast<long>(std::min(kShown, nodes.size())));
  return util::join(shown, ", ") + (nodes.size() > kShown ? " and " + std::to_string(nodes.size() - kShown) + " more" : "");
}

}  // namespace

ProbeVerdict judge_probe(const ProbeFacts& f) {
  const auto quiet = unanswered(f);
  if (quiet.empty()) return {};
  const auto slurm_says = confirmed(quiet, f);
  const std::string only = slurm_says.empty() ? "none is blamed" : "only what Slurm marks not responding is blamed (" +
                                                                       listed(slurm_says) + ")";
  if (f.control && in(f.silent, *f.control))
    return {slurm_says, "the control node " + *f.control + ", whose heartbeat moves, did not answer either: the "
                        "controller or the network is slow, not " + listed(quiet) + "; " + only};
  if (quiet.size() == f.probed.size() && !f.control && f.probed.size() > 1)
    return {slurm_says, "no node answered: the probe's step could not start (a slow or unreachable controller); " + only};
  if (quiet.size() > kFewSilent && slurm_says.size() < quiet.size())
    return {slurm_says, std::to_string(quiet.size()) + " nodes did not answer at once (" + listed(quiet) + "): a set " +
                            "that large points at the controller, a switch or the network rather than at each node; " + only};
  return {quiet, ""};
}

}  // namespace mlsup::decide
