#pragma once
// What a probe of a job's nodes proves. A node that does not answer a step within the deadline is
// silent; but a slow controller, or a network that drops many at once, also leaves nodes unanswered,
// so a probe proves a node silent only when something shows the probe itself worked: another node
// answered (a control node beside the suspects), and no more than a few are silent unless Slurm's own
// view (not responding, down) says so too. Pure.
#include <optional>
#include <string>
#include <vector>

namespace mlsup::decide {

// More silent nodes than this at once need Slurm's own view to be blamed (a power loss is one node).
inline constexpr std::size_t kFewSilent = 2;

struct ProbeFacts {
  std::vector<std::string> probed;                // the nodes judged
  std::vector<std::string> silent;                // of them (and the control), those that did not answer
  std::optional<std::string> control;             // a node whose heartbeat moves, probed beside them
  std::vector<std::string> slurm_not_responding;  // Slurm marks them not responding or down (nullopt-free: [] = none)
};

struct ProbeVerdict {
  std::vector<std::string> silent;  // the probed nodes shown silent
  std::string doubt;                // why the others that did not answer are not (""  when none)
};

// The nodes the probe shows silent, and why any other silence proves nothing.
ProbeVerdict judge_probe(const ProbeFacts& f);

}  // namespace mlsup::decide
