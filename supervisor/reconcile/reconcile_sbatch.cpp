// Exactly once across supervisors: an open submission whose sbatch an earlier supervisor left running
// is waited for (its job, submitted held, is adopted when it appears), and a job that carries one of
// the campaign's tags but is not the journal's is cancelled as a duplicate. Pure (reconcile/reconcile.h).
#include <algorithm>

#include "reconcile/reconcile_pass.h"
#include "render/contract.h"
#include "slurm_model/types.h"

namespace mlsup::engine::reconcile_parts {
namespace {

// Past an sbatch's own deadline, this long for its last answer to land in slurmctld.
constexpr double kSbatchGrace = 30;

double sbatch_deadline(const SbatchRun& run, const World& w) {
  const double limit = static_cast<double>(slurm::kSbatchTimeout.count()) + kSbatchGrace;
  return (run.server_time > 0 && w.server_now ? run.server_time : run.time) + limit;
}

// Now, on the clock the deadline of run is counted on: the file server's when both were read from it.
double now_for(const SbatchRun& run, const Pass& p) {
  return run.server_time > 0 && p.w.server_now ? *p.w.server_now : p.wall();
}

std::string who(const SbatchRun& run) { return "pid " + std::to_string(run.pid) + " on " + run.host; }

// True when job is the one the journal names for attempt a (chain mode: a task of its array).
bool journal_job(const AttemptState& a, const slurm::Job& job) {
  return *a.job_id == job.job_id || *a.job_id == job.array_job_id || a.task_job_id == job.job_id;
}

}  // namespace

bool sbatch_in_flight(Pass& p, const AttemptState& a) {
  if (!a.sbatch || !p.w.sbatch_read) return false;
  const SbatchRun& run = *a.sbatch;
  const bool here = p.w.sbatch_running.has_value();
  if (here && !*p.w.sbatch_running) {
    p.add(intent::EndSbatch{a.number, run, false, "the sbatch of an earlier supervisor (" + who(run) +
                                                      ") has ended and no job carries the attempt's tag"});
    return false;
  }
  if (now_for(run, p) < sbatch_deadline(run, p.w)) {
    if (a.sbatch_awaited != run.pid)
      p.add(intent::AwaitSbatch{a.number, run, "an sbatch of an earlier supervisor (" + who(run) + ") " +
                                                   (here ? "still runs" : "ran on another host and may still run") +
                                                   ": its job, which waits held, is adopted when it appears; nothing "
                                                   "is submitted until it ends or its deadline passes"});
    return true;
  }
  p.add(intent::EndSbatch{a.number, run, here, "the sbatch of an earlier supervisor (" + who(run) + ") is past its " +
                                                   "deadline without a job" + (here ? ": it is ended" : "")});
  return false;
}

// True when a later attempt that has not ended runs in job (spare nodes: the same job; chain mode: its array).
bool later_attempt_runs_in(const CampaignState& s, int number, const slurm::Job& job) {
  return std::any_of(s.attempts.begin(), s.attempts.end(), [&](const AttemptState& a) {
    return a.number > number && !a.ended && a.job_id && journal_job(a, job);
  });
}

void cancel_duplicates(Pass& p) {
  if (!p.w.tagged || !*p.w.tagged) return;
  p.m.duplicates_swept_at = p.mono();
  const std::string prefix = render::campaign_tag_prefix(p.c.name, p.campaign_id);
  for (const auto& job : **p.w.tagged) {
    const auto number = render::tag_attempt(job.comment, prefix);
    if (!number || slurm::is_final(job.state)) continue;
    for (const auto& a : p.s.attempts) {
      if (a.number != *number || !a.job_id) continue;
      if (!journal_job(a, job)) p.add(intent::CancelDuplicate{a.number, job, *a.job_id});
      else if (a.ended && p.c.slurm.spare_nodes == 0 && (!a.chain || a.task_job_id == job.job_id) &&
               !later_attempt_runs_in(p.s, a.number, job))
        p.add(intent::CancelDuplicate{a.number, job, *a.job_id, true});  // a controller that lost its state runs it again
    }
  }
}

}  // namespace mlsup::engine::reconcile_parts
