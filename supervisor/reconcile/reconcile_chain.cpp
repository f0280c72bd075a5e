// Chain mode, an attempt handed to the array that no task has claimed yet: the claim once a task
// writes it (or a task running long past its claim without one), the exclusions kept on the queued
// tasks, the pending wait, and a new array when the old one runs out. Pure (reconcile/reconcile.h).
#include <algorithm>

#include "reconcile/reconcile_pass.h"
#include "render/chain.h"

namespace mlsup::engine::reconcile_parts {
namespace {

// How long a task may run before its first lines must have claimed an attempt: the wait for values,
// then a claim being made waited for until it is stranded, and the takeover.
double claim_deadline(const config::Config& c) {
  return static_cast<double>(c.slurm.chain_start_wait.count() + 2 * render::kStrandedClaimSeconds);
}

// A task runs past that deadline without a claim (its claim was lost, or never written): mlsup
// watches it as this attempt rather than leave it unsupervised.
bool watch_unclaimed(Pass& p, const AttemptState& a, const std::vector<slurm::Job>& jobs) {
  std::vector<slurm::JobId> known;
  for (const auto& q : p.s.attempts)
    if (q.task_job_id) known.push_back(*q.task_job_id);
  const auto task = unclaimed_task(jobs, known, p.wall(), claim_deadline(p.c));
  if (!task) return false;
  const std::string id = std::to_string(*task->array_task_id);
  p.report(events::ChainTaskUnclaimed{
      a.number, task->job_id, p.wall() - static_cast<double>(task->start_time),
      "task " + id + " runs without having claimed an attempt: it is watched as attempt " + std::to_string(a.number) +
          ", and ended as hung unless that attempt's heartbeat moves"});
  p.add(intent::Claimed{a.number, *a.job_id, Claim{task->job_id, id, "unclaimed", a.resume_from}});
  return true;
}

}  // namespace

void watch_chain(Pass& p, const AttemptState& a, const std::vector<slurm::Job>& jobs) {
  p.add(intent::ChainValues{a, a.resume_from});  // again: a supervisor may have died between the intent and the hand-over
  if (p.w.claim) return p.add(intent::Claimed{a.number, *a.job_id, *p.w.claim});
  if (watch_unclaimed(p, a, jobs)) return;
  const auto* rest = queued_remainder(jobs);
  if (rest) {  // the hand-over's patch, again, for a supervisor that died before it
    const auto previous = std::find_if(p.s.attempts.begin(), p.s.attempts.end(),
                                       [&](const AttemptState& q) { return q.number == a.number - 1; });
    p.add(intent::PatchQueued{a, *rest, previous == p.s.attempts.end() ? std::vector<std::string>{} : previous->exclude});
  }
  const bool starting = task_running(jobs);
  if (rest) p.add(intent::Status{*rest});
  if (rest && !starting) return pending(p, a, *rest);
  if (rest || starting) return;
  if (a.cancel_reason)  // mlsup cancelled the chain before a task took the attempt (the kill switch)
    return end(p, a, slurm::Job{.job_id = *a.job_id, .state = slurm::JobState::Cancelled}, false);
  // The chain ran out before a task took the attempt: a new chain, under a tag of its own.
  p.add(intent::ChainExhausted{a.number, *a.job_id, tag(p, a.number) + "-r" + std::to_string(static_cast<long long>(p.wall()))});
}

}  // namespace mlsup::engine::reconcile_parts
