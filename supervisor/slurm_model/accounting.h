#pragma once
// What Slurm's accounting (slurmdbd) keeps of jobs, independent of how it was asked (slurmdb API or sacct).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "slurm_model/types.h"

namespace mlsup::slurm {

// What accounting (slurmdbd) keeps of a job, also after the controller has forgotten it.
struct AccountedJob {
  JobId job_id = 0;
  JobId array_job_id = 0;                     // 0 when not part of an array
  JobState state = JobState::Unknown;
  int exit_code = 0;                          // the batch script's exit code
  int exit_signal = 0;                        // the signal that ended it, 0 if none
  std::optional<std::uint32_t> cancelled_by;  // the uid that cancelled it, when it was cancelled
  std::string comment;                        // the job's comment (mlsup's tag) where the site stores it
};

// Accounting's answer: `available` is false when the site keeps none (then `jobs` is empty).
struct Accounting {
  bool available = false;
  std::vector<AccountedJob> jobs;
};

// The cluster's record of node failures over a window: every user's jobs that ended in it.
struct NodeFailureHistory {
  bool available = false;  // false where the site keeps no accounting (then both figures are 0)
  double node_seconds = 0;  // the sum over those jobs of nodes x elapsed seconds
  int node_failures = 0;    // those jobs that ended NODE_FAIL
};

}  // namespace mlsup::slurm
