// act on what exactly-once submission found (reconcile/reconcile_sbatch.cpp): an earlier supervisor's
// sbatch waited for or ended, a duplicate job cancelled. Each journaled, so that it is told once and
// accounting's jobs all have their record.
#include <csignal>

#include "campaign/actor.h"
#include "slurm_model/types.h"

namespace mlsup::engine {
using nlohmann::json;

util::Result<void> Actor::act(const CampaignState&, const intent::AwaitSbatch& i) {
  return fact(records::SbatchAwaited{i.attempt, i.run.pid, i.run.host}, events::SbatchAwaited{{i.reason}});
}

util::Result<void> Actor::act(const CampaignState&, const intent::EndSbatch& i) {
  if (auto leased = keep_lease(0); !leased) return leased;
  if (i.kill) {
    if (edges_.kill_group) edges_.kill_group(i.run.pid);
    else {
      ::kill(-i.run.pid, SIGKILL);
      ::kill(i.run.pid, SIGKILL);
    }
  }
  return fact(records::SbatchEnded{i.attempt, i.run.pid, i.kill}, events::SbatchEnded{{i.reason}});
}

util::Result<void> Actor::act(const CampaignState&, const intent::CancelDuplicate& i) {
  if (auto leased = keep_lease(kSlurmCallBound); !leased) return leased;
  if (auto done = edges_.slurm->cancel(i.job.job_id); !done && !slurm::already_over(done.error())) {
    event(events::DuplicateCancelFailed{{i.attempt, i.job.job_id, done.error().message, "tried again next pass"}});
    return {};
  }
  const std::string state(slurm::state_name(i.job.state));
  const std::string job = "job " + std::to_string(i.job.job_id) + " (" + state + ")";
  const std::string why =
      i.revived ? job + " is attempt " + std::to_string(i.attempt) + "'s, which has ended: the controller runs it again " +
                      "(a restart that lost its state?); it is cancelled"
                : job + " carries attempt " + std::to_string(i.attempt) + "'s tag, but the attempt's job is " +
                      std::to_string(i.attempt_job) + ": an sbatch whose answer was lost, or one of a supervisor that " +
                      "had lost the campaign, submitted it; it is cancelled";
  return fact(records::DuplicateCancelled{i.attempt, i.job.job_id, state, i.attempt_job, i.revived},
              events::DuplicateCancelled{i.job.state != slurm::JobState::Pending, why});
}

}  // namespace mlsup::engine
