#pragma once
// Submission through `sbatch --parsable`, shared by both backends: sbatch parses the #SBATCH lines
// and runs the site's cli_filter and SPANK options exactly as for a user's own submission.
#include "edges/process.h"
#include "slurm/client.h"

namespace mlsup::slurm {

// Runs sbatch for request (without a shell) and returns the job id it printed.
Result<JobId> submit_with_sbatch(const SubmitRequest& request);

// Reads sbatch's result: "123" or "123;cluster" on stdout, or an error sorted by its message.
Result<JobId> parse_sbatch_result(const edges::ProcessResult& result);

}  // namespace mlsup::slurm
