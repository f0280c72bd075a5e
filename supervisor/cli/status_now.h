#pragma once
// What `status` says of the current attempt's job and heartbeat, each with where it was read and how
// old it is: the journal's record of its end, its supervisor's last pass of that same job, or Slurm
// asked once within a deadline when no supervisor holds the campaign; the heartbeat files themselves.
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "slurm_model/types.h"
#include "store/read_campaign.h"

namespace mlsup::cli {

// How long `status` waits for Slurm's answer before it shows what is stored.
inline constexpr double kStatusSlurmDeadline = 5;

// job_state, nodes and job_seen ({source: journal | supervisor | slurm, at, age}) from what is stored:
// the end the journal recorded for the current attempt, else the last pass's view of its job (a view
// of another job, an earlier attempt's, is not shown as this one's).
void stored_job(nlohmann::json& view, const store::StoredCampaign& stored, double now);

// The current attempt's job while it has not ended (a chain's task, else the attempt's own); nullopt otherwise.
std::optional<slurm::JobId> open_job(const store::StoredCampaign& stored);

// The job status asks Slurm about: the current attempt's, while it has not ended and no supervisor holds it.
std::optional<slurm::JobId> job_to_ask(const store::StoredCampaign& stored);

// Slurm's answer about ids, asked once; an error when it did not answer within deadline seconds (the
// question is left to finish on its own).
slurm::Result<std::vector<slurm::Job>> ask_jobs(const std::string& backend, const std::vector<slurm::JobId>& ids,
                                               double deadline);

// The view's job from Slurm's answer about id: its state and nodes, asked now; absent from the answer,
// "gone" (Slurm purged it: the next pass reads its end); no answer: what is stored, with Slurm's error.
void slurm_job(nlohmann::json& view, slurm::JobId id, const slurm::Result<std::vector<slurm::Job>>& answer, double now);

// The step from the heartbeat files themselves when they are ahead of what the supervisor remembers
// (under cron, memory is as old as the last tick); heartbeat_age then from the files' write times.
void live_step(nlohmann::json& view, const config::Config& c, const store::StoredCampaign& stored, double now);

}  // namespace mlsup::cli
