// What a reconcile pass must observe: decided from the journal's state and the memory, then from
// the job query's answer, so that a source is read only when a decision of this pass uses it.
#include <algorithm>

#include "decide/ledger.h"
#include "decide/pending.h"
#include "decide/submit_retry.h"
#include "reconcile/reconcile.h"
#include "reconcile/reconcile_pass.h"

namespace mlsup::engine {
using reconcile_parts::submit_due;

namespace {

// What a submission decides from: the template, the checkpoints, the nodes (for the exclusion cap)
// and, in chain mode, the previous attempt's array (a queued task runs the next attempt).
void for_submission(Needs& n, const CampaignState& s, const World& w, const AttemptState* previous, const config::Config& c) {
  const bool spare = c.slurm.spare_nodes > 0;  // the previous job may run it: its record and the nodes' states
  n.template_text = n.checkpoints = true;
  n.nodes = spare || !decide::excluded_nodes(s.ledger, w.now.wall, -1).empty();
  n.chain = previous && (previous->chain || spare) && previous->job_id;
}

// What an ending decides from: the heartbeat's last word, the checkpoints, the nodes' evidence.
void for_ending(Needs& n) { n.heartbeat = n.checkpoints = n.nodes = n.ending = true; }

// Chain mode, an attempt no task has claimed: its claim, and what an ending needs once the array is gone.
void for_chain(Needs& n, const World& w, const AttemptState& a, const std::vector<slurm::Job>& jobs) {
  n.claim = true;
  if (w.claim_read && !w.claim && !queued_remainder(jobs) && !task_running(jobs) && a.cancel_reason) for_ending(n);
}

}  // namespace

bool duplicates_due(const CampaignState& s, const Memory& m, double mono) {
  if (s.attempts.empty()) return false;
  const bool uncertain = std::any_of(s.attempts.begin(), s.attempts.end(), [](const AttemptState& a) { return a.uncertain; });
  return uncertain || mono - m.duplicates_swept_at >= kDuplicateSweep;
}

bool checkpoints_due(const Memory& m, const config::Config& c, double mono) {
  const double period = std::max(10.0, 10.0 * static_cast<double>(c.poll_interval.count()) / 1000.0);
  return mono - m.checkpoints_looked_at >= period;
}

Needs needs(const CampaignState& s, const World& w, const Memory& m, const config::Config& c) {
  Needs n;
  const AttemptState* a = s.current();
  if (s.finished_code) return n;
  // A job of the campaign that the journal does not name is cancelled; looked for once Slurm has answered.
  const auto answered = [](const std::optional<JobsAnswer>& q) { return q && *q; };
  n.tagged = duplicates_due(s, m, w.now.mono) && (answered(w.jobs) || answered(w.by_tag) || (!w.jobs && !w.by_tag));
  if (!a || a->ended) {
    Memory asked = m;  // submit_due may take a wait from the journal: the pass's memory is reconcile's to change
    const bool due = !a || (s.awaiting_submit && submit_due(s, asked, w.now));
    const bool closed = w.window && !w.window->open;  // nothing is submitted outside the window
    if (due && !w.kill_switch && !closed) for_submission(n, s, w, a, c);
    n.chain = n.chain || (a && a->chain && a->job_id && (s.paused || a->held || closed));  // the queued tasks a pause holds
    return n;
  }
  if (!a->job_id) {
    n.by_tag = true;
    n.sbatch = a->sbatch.has_value() && w.by_tag && *w.by_tag && (*w.by_tag)->empty();
    n.template_text = w.by_tag && *w.by_tag && (*w.by_tag)->empty();
    n.accounting = n.template_text && !a->submit_failures.empty() && decide::outcome_unknown(a->submit_failures.back().kind);
    return n;
  }
  n.jobs = true;
  if (!w.jobs || !*w.jobs) return n;
  const auto& jobs = **w.jobs;
  if (a->chain && !a->task_job_id) {
    for_chain(n, w, *a, jobs);
    return n;
  }
  const slurm::Job* job = watched_job(*a, jobs);
  if (!job || slurm::is_final(job->state)) {
    for_ending(n);
    n.accounting = n.end_record = !job && !a->cancel_reason;  // forgotten: how it ended, from the other sources
  } else if (job->state == slurm::JobState::Running && c.slurm.spare_nodes > 0 && (a->steps_only || !a->cancel_reason)) {
    n.spare = true;  // the job's claim of the attempt, and the end of its run
    if (a->steps_only || (w.spare_end && spare_run_failed(*w.spare_end, c))) for_ending(n);
  }
  if (job && job->state == slurm::JobState::Pending && !a->cancel_reason && decide::may_want_nodes(job->reason))
    n.nodes = true;  // can the partition give it what it asks (reconcile/reconcile_watch.cpp)?
  if (job && job->state == slurm::JobState::Running && !a->cancel_reason) {
    n.heartbeat = true;
    const bool other = m.attempt != a->number;  // reconcile's focus() starts such a memory afresh
    const bool looked_for = a->chain || c.checkpoint.keep > 0;  // next.env's fallback; retention
    n.checkpoints = n.checkpoints || (looked_for && checkpoints_due(other ? Memory{} : m, c, w.now.mono));
  }
  return n;
}

}  // namespace mlsup::engine
