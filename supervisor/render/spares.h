#pragma once
// Spare nodes (slurm.spare_nodes K): the job holds the training's N nodes plus K (sbatch --nodes=N+K
// --no-kill, so it outlives a node), and its first lines run the script's own lines once per
// attempt, on N of its nodes. mlsup hands the next attempt to the running job in
// <state_dir>/spares/next.env; the job claims it by creating <state_dir>/spares/claims/<attempt>
// (mkdir is atomic), records itself and the attempt's nodes in it (task), and, when that run ends,
// its exit status (end).
#include <string>
#include <vector>

#include "config/config.h"
#include "render/contract.h"

namespace mlsup::render {

// How long the job waits, after a run of the script failed, for mlsup to hand it the next attempt
// before it ends with that run's exit status (mlsup then goes on as after any ending).
inline constexpr int kHandoverWaitSeconds = 120;

// The values of attempt for job (contract values, the plugin's heartbeat base, MLSUP_STEP_NODES, and
// MLSUP_FOR_JOB naming the job they are for) as lines a shell sources. Attempt number 0 with no
// nodes tells the job that no attempt comes: it ends at once.
std::string spare_values(const config::Config& config, const Attempt& attempt, unsigned long long job,
                         const std::vector<std::string>& nodes);

// The lines that run the script's own lines once per attempt (see above): nnodes the training's
// nodes, tasks_per_node its tasks on each, shell the script's #! program.
std::string spare_preamble(const config::Config& config, int nnodes, int tasks_per_node, const std::string& shell);

// A claim's task file: "JOB NODE,NODE,..."; nullopt while incomplete.
struct SpareClaim {
  unsigned long long job_id = 0;
  std::vector<std::string> nodes;
};
std::optional<SpareClaim> parse_spare_claim(const std::string& text);

}  // namespace mlsup::render
