#pragma once
// Chain mode's facts about an array's records (render/chain.h has the hand-over files).
#include <optional>
#include <string>
#include <vector>

#include "slurm_model/types.h"

namespace mlsup::engine {

// Which task took an attempt: <state_dir>/chain/claims/<attempt>/task, written by the task itself.
struct Claim {
  slurm::JobId job_id = 0;
  std::string task;         // SLURM_ARRAY_TASK_ID
  std::string how;          // "prepared" (mlsup's values) or "fallback" (mlsup did not answer in time)
  std::string resume_from;  // what the task resumed from
};

// Parses a claim file ("JOBID TASK HOW RESUME_FROM"); nullopt while it is incomplete.
std::optional<Claim> parse_claim(const std::string& text);

// True when the array still has a task other than ended_task queued or running.
bool chain_goes_on(const std::vector<slurm::Job>& jobs, slurm::JobId ended_task);

// The record of the array's queued tasks (pending, not yet split off), if any.
const slurm::Job* queued_remainder(const std::vector<slurm::Job>& jobs);

// True when a task of the array runs.
bool task_running(const std::vector<slurm::Job>& jobs);

// The task that can run the next attempt: the queued remainder first, else a live task other than
// previous_task (the one that ran the attempt before).
std::optional<slurm::Job> next_task(const std::vector<slurm::Job>& jobs, slurm::JobId previous_task);

// A running task of the array that started at least `after` seconds before wall time `now` and is
// none of `known` (the tasks that claimed earlier attempts): its first lines never claimed an attempt.
std::optional<slurm::Job> unclaimed_task(const std::vector<slurm::Job>& jobs, const std::vector<slurm::JobId>& known,
                                         double now, double after);

}  // namespace mlsup::engine
