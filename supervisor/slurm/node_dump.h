#pragma once
// At a hang of a training without the Python helper: one step over the job's nodes that still answer
// (srun --overlap, one task per node, lines labelled with the task) in which each task writes what the
// job's processes on its node are doing: state, kernel wait channel, command line, the stacks py-spy
// or else gdb gives where installed, and nvidia-smi -q where present (observe/node_dump.h reads it).
#include <chrono>
#include <string>
#include <vector>

#include "edges/process.h"
#include "slurm_model/types.h"

namespace mlsup::slurm {

// The shell script each task runs (POSIX sh; SLURM_JOB_ID, SLURM_STEP_ID, SLURMD_NODENAME from srun).
extern const char* const kNodeDumpScript;

// The dump step's command line for nodes of job.
std::vector<std::string> node_dump_argv(JobId job, const std::vector<std::string>& nodes);

// Runs the step, killed after timeout (what was printed by then is kept).
edges::ProcessResult run_node_dump(JobId job, const std::vector<std::string>& nodes, std::chrono::seconds timeout);

}  // namespace mlsup::slurm
