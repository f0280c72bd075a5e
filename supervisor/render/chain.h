#pragma once
// Chain mode (slurm.array "1-N%1"): every task of the array is one attempt, and takes that attempt's
// values when it starts, not when it was submitted. mlsup writes the next attempt's values into
// <state_dir>/chain/next.env; a task's first lines source them and claim the attempt by creating
// <state_dir>/chain/claims/<attempt> (mkdir is atomic), then record which task it is in it.
#include <string>
#include <string_view>

#include "config/config.h"
#include "render/contract.h"

namespace mlsup::render {

// The SPANK plugin's base path of per-task heartbeats: set in the batch step to the heartbeat file
// the job was submitted with, it is where every srun step's P.d/<node>.<rank> starts from, so a
// chain task must point it at its own attempt's file.
inline constexpr const char* kPluginHeartbeatBase = "MLSUP_ATTEMPT_HEARTBEAT_FILE";

// A chain task whose claim the file system refuses (mkdir fails other than "exists", the task file
// cannot be written) exits with this before the script's own lines run. 78 (do not retry) and 79
// (the plugin's health check) are taken.
inline constexpr int kClaimFailedExit = 80;

// A claim folder this old without its task file is stranded (its task died between the two), and
// the next task may take it over.
inline constexpr int kStrandedClaimSeconds = 60;

// The most claims a task tries (attempts others hold, seconds waited on a claim being made) before
// it gives up with kClaimFailedExit.
inline constexpr int kClaimTries = 1000;

// The contract values of attempt, and the plugin's heartbeat base, as lines a shell sources
// ("export MLSUP_ATTEMPT=3").
std::string chain_values(const config::Config& config, const Attempt& attempt);

// The shell lines a chain task runs before the script's own: wait (slurm.chain_start_wait) for an
// attempt nobody has claimed yet, leave at once if one of its nodes is excluded from it, claim it.
std::string chain_preamble(const config::Config& config);

// script with lines put after its #! line and the #SBATCH block that follows it.
std::string insert_after_header(std::string_view script, std::string_view lines);

}  // namespace mlsup::render
