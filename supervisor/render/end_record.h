#pragma once
// The end record: lines mlsup puts at the top of a shell batch script (after its #! line and #SBATCH
// block) so that the script leaves, as it ends, its exit status and the signal that ended it
// (SIGTERM, SIGINT, SIGHUP) in <state_dir>/ends/<job id>, written whole by a rename. mlsup reads it
// only when Slurm has forgotten the job and neither accounting nor the plugin knows its end: a
// SIGKILL of the batch shell leaves none, and a script that sets its own EXIT or signal traps
// replaces these. Pure.
#include <string>
#include <string_view>

#include "config/config.h"

namespace mlsup::render {

// The shell lines that write the end record.
std::string end_record_lines(const config::Config& config);

// True when the script's #! line runs a POSIX shell (sh, bash, dash, ksh, zsh), directly or through env.
bool shell_script(std::string_view script);

}  // namespace mlsup::render
