#pragma once
// Asks each node of a running job whether it still answers, by running a trivial step on it:
// libslurm has no slurmd ping, and a frozen node's slurmd still accepts TCP connections.
#include <chrono>
#include <string>
#include <vector>

#include "edges/process.h"
#include "slurm/types.h"

namespace mlsup::slurm {

// The nodes among nodes that gave no answer within timeout (all probed at once); a step refused at
// once is an answer.
std::vector<std::string> unresponsive_nodes(JobId job, const std::vector<std::string>& nodes,
                                            std::chrono::seconds timeout);

// Whether one probe's result means the node is gone: no answer in time, or Slurm could not reach
// its slurmd (a crashed node refuses the connection). A step refused for other reasons is an answer.
bool probe_says_silent(const edges::ProcessResult& result);

}  // namespace mlsup::slurm
