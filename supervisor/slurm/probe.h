#pragma once
// Asks the nodes of a running job whether they still answer, by running one trivial step over all of
// them (each task prints its node's name): libslurm has no slurmd ping, and a frozen node's slurmd
// still accepts TCP connections. Beyond TreeWidth nodes srun reaches a node through another node's
// slurmd, and a frozen relay silences its healthy children with it: when several nodes are silent,
// they are asked again in one step of their own, with twice the deadline (few nodes: srun reaches
// each directly). At most two step creations whatever the width; a lone silent node costs one.
#include <chrono>
#include <set>
#include <string>
#include <vector>

#include "edges/process.h"
#include "slurm_model/types.h"

namespace mlsup::slurm {

// The nodes among nodes that gave no answer within timeout in the first step (alone) or, when
// several were silent, nor within twice it in the second. A step Slurm refuses or cannot create
// answers for no node: the caller weighs that (decide/probe.h), not this.
std::vector<std::string> unresponsive_nodes(JobId job, const std::vector<std::string>& nodes,
                                            std::chrono::seconds timeout);

// The nodes a probe step's output names (one name per line, as its tasks printed them).
std::set<std::string> probe_answers(const edges::ProcessResult& result);

// The start of a step's command line that runs one task on each of nodes of a running job, beside
// its own steps (srun --overlap); the caller adds its options and the command.
std::vector<std::string> one_task_per_node(JobId job, const std::vector<std::string>& nodes);

// The probe step's command line for nodes of job.
std::vector<std::string> probe_argv(JobId job, const std::vector<std::string>& nodes);

}  // namespace mlsup::slurm
