#pragma once
// Accounting through libslurm's slurmdb API (slurmdb_jobs_get), for the libslurm backend. Not
// thread-safe: the backend calls it under its mutex.
#include <cstdint>
#include <ctime>
#include <string>
#include <vector>

#include "slurm_model/accounting.h"
#include "slurm_model/types.h"

namespace mlsup::slurm {

// What to ask accounting for: the jobs with these ids, or else this user's jobs submitted since
// `since` whose comment starts with tag_prefix; of this cluster.
struct AccountingFilter {
  std::vector<JobId> ids;
  std::string tag_prefix;
  std::time_t since = 0;
  std::string cluster;
};

// The cluster's name when the controller's configuration names an accounting storage other than
// "none", else "" (one RPC).
Result<std::string> accounted_cluster();

// The jobs of filter in accounting, one slurmdbd request.
Result<std::vector<AccountedJob>> slurmdb_accounted(const AccountingFilter& filter);

// Every user's jobs of cluster that ended since `since`: their alloc nodes x (end - start) summed, and
// those that ended NODE_FAIL; one slurmdbd request.
Result<NodeFailureHistory> slurmdb_node_failures(const std::string& cluster, std::time_t since);

// Slurm's base job state (job_info_t and slurmdb_job_rec_t share the encoding) as a JobState.
JobState job_state_of(std::uint32_t state);

}  // namespace mlsup::slurm
