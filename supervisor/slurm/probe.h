#pragma once
// Asks the nodes of a running job whether they still answer, by running one trivial step over all of
// them (each task prints its node's name): libslurm has no slurmd ping, and a frozen node's slurmd
// still accepts TCP connections. One step over every node, then the nodes that did not answer again
// with twice the deadline: each in a step of its own when they are few (a frozen node in a step can
// keep its neighbours' tasks from starting: its slurmd relays their launch), else in one step. At
// most 1 + kSeparateAtMost steps, whatever the width.
#include <chrono>
#include <set>
#include <string>
#include <vector>

#include "edges/process.h"
#include "slurm/types.h"

namespace mlsup::slurm {

// Silent nodes asked again in a step each (at once) up to this many; more share one step.
inline constexpr std::size_t kSeparateAtMost = 3;

// The nodes among nodes that gave no answer within timeout in the first step, nor within twice it in
// the second. A step Slurm refuses or cannot create answers for no node: the caller weighs that
// (decide/probe.h), not this.
std::vector<std::string> unresponsive_nodes(JobId job, const std::vector<std::string>& nodes,
                                            std::chrono::seconds timeout);

// The nodes a probe step's output names (one name per line, as its tasks printed them).
std::set<std::string> probe_answers(const edges::ProcessResult& result);

// The probe step's command line for nodes of job.
std::vector<std::string> probe_argv(JobId job, const std::vector<std::string>& nodes);

}  // namespace mlsup::slurm
