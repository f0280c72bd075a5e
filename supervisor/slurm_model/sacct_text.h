#pragma once
// Reads `sacct -X -n -P --format=JobIDRaw,JobID,State,ExitCode,Comment` output: one job per line, fields
// split by '|', the comment last (it may itself hold '|').
#include <string_view>
#include <vector>

#include "slurm_model/accounting.h"
#include "slurm_model/types.h"

namespace mlsup::slurm {

// The --format sacct is asked for; parse_sacct reads its lines.
inline constexpr std::string_view kSacctFormat = "JobIDRaw,JobID,State,ExitCode,Comment";

// The jobs of sacct's lines; a line that does not read as a job is skipped.
std::vector<AccountedJob> parse_sacct(std::string_view text);

// The --format of the node-failure history (`sacct -a -X -n -P`); parse_node_failure_history reads its lines.
inline constexpr std::string_view kSacctHistoryFormat = "NNodes,ElapsedRaw,State";

// The history of sacct's lines: each job that has ended adds nodes x elapsed seconds, and one node failure
// when it ended NODE_FAIL; a job not ended yet, and a line that does not read as a job, are skipped.
NodeFailureHistory parse_node_failure_history(std::string_view text);

// True when sacct's error says the site keeps no accounting.
bool accounting_disabled(std::string_view message);

}  // namespace mlsup::slurm
