// Chain mode, an attempt handed to the array that no task has claimed yet: the claim once a task
// writes it, the exclusions kept on the queued tasks, the pending wait, and a new array when the old
// one runs out. Pure (engine/reconcile.h).
#include <algorithm>

#include "engine/reconcile_pass.h"

namespace mlsup::engine::reconcile_parts {

void watch_chain(Pass& p, const AttemptState& a, const std::vector<slurm::Job>& jobs) {
  p.add(intent::ChainValues{a, a.resume_from});  // again: a supervisor may have died between the intent and the hand-over
  if (p.w.claim) return p.add(intent::Claimed{a.number, *a.job_id, *p.w.claim});
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
