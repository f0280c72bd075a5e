#include "state/state.h"

#include <algorithm>
#include <functional>
#include <map>

#include "decide/classes.h"
#include "slurm_model/types.h"
#include "state/records.h"

namespace mlsup::engine {
namespace {

using Apply = std::function<void(CampaignState&, const JournalRecord&)>;
namespace rec = records;

AttemptState* attempt(CampaignState& s, int n) {
  for (auto it = s.attempts.rbegin(); it != s.attempts.rend(); ++it)  // newest first: a record is nearly always about it
    if (it->number == n) return &*it;
  return nullptr;
}

void on_campaign(CampaignState& s, const rec::Campaign& c, const JournalRecord&) { s.campaign_id = c.id; }

void on_submit_intent(CampaignState& s, const rec::SubmitIntent& i, const JournalRecord& r) {
  AttemptState a;
  a.number = i.attempt;
  a.tag = i.tag;
  a.resume_from = i.resume_from;
  a.resume_step = i.resume_step;
  a.exclude = i.exclude;
  a.signal_lead = i.signal_lead;
  a.debug = i.debug;
  a.intent_time = r.time;
  a.chain = i.chain;
  if (i.chain_job) a.job_id = i.chain_job;  // the next task of a queued chain
  if (i.in_job) {  // spare nodes: the job that ran the attempt before runs it
    a.job_id = i.in_job;
    a.in_job = true;
    a.step_nodes = i.step_nodes;
  }
  s.attempts.push_back(std::move(a));
  s.awaiting_submit = false;
  s.resume_point.clear();  // taken by this submission
}

void took_job(AttemptState& a, const rec::Submitted& d) {
  a.job_id = d.job_id;
  a.submit_failures.clear();
  a.chain = d.chain.value_or(a.chain);
  a.sbatch.reset();
  a.sbatch_awaited = 0;
  if (d.held) {  // submitted held: released once the journal has it
    a.held = true;
    a.held_for = "submission";
  }
}

void on_submitted(CampaignState& s, const rec::Submitted& d, const JournalRecord& r) {
  if (auto* a = attempt(s, d.attempt)) {
    took_job(*a, d);
    ++a->submissions;
    if (a->submitted_at == 0) a->submitted_at = r.time;
  }
}

void on_adopted(CampaignState& s, const rec::Adopted& d, const JournalRecord& r) {
  if (auto* a = attempt(s, d.attempt)) {
    took_job(*a, d);
    a->uncertain = true;  // found by its tag: another sbatch of it may have run too
    if (a->submitted_at == 0) a->submitted_at = r.time;
  }
}

void on_sbatch_started(CampaignState& s, const rec::SbatchStarted& d, const JournalRecord& r) {
  if (auto* a = attempt(s, d.attempt)) a->sbatch = SbatchRun{d.pid, d.start_ticks, d.host, d.boot_id, r.time, d.server_time.value_or(0.0)};
}

// An earlier supervisor's sbatch is waited for (sbatch-awaited), or its end is known (sbatch-ended).
void on_sbatch_awaited(CampaignState& s, const rec::SbatchAwaited& d, const JournalRecord&) {
  if (auto* a = attempt(s, d.attempt)) {
    a->sbatch_awaited = d.pid;
    a->uncertain = true;
  }
}

void on_sbatch_ended(CampaignState& s, const rec::SbatchEnded& d, const JournalRecord&) {
  if (auto* a = attempt(s, d.attempt)) {
    a->sbatch.reset();
    a->sbatch_awaited = 0;
    a->uncertain = true;
  }
}

void on_submit_failed(CampaignState& s, const rec::SubmitFailed& d, const JournalRecord& r) {
  if (auto* a = attempt(s, d.attempt)) {
    a->sbatch.reset();
    a->uncertain = a->uncertain || decide::outcome_unknown(d.kind);
    a->submit_failures.push_back({r.time, d.kind, d.message});
    ++a->failed_submissions;
  }
}

void on_spares_dropped(CampaignState& s, const rec::SparesDropped& d, const JournalRecord&) {
  if (auto* a = attempt(s, d.attempt)) a->spares_dropped = true;
}

void on_pending_alert(CampaignState& s, const rec::PendingAlert& d, const JournalRecord&) {
  if (auto* a = attempt(s, d.attempt)) a->pending_alerted = true;
}

// A chain task took the attempt; with values it found for itself when mlsup was away, its resume point.
void on_claimed(CampaignState& s, const rec::Claimed& d, const JournalRecord&) {
  auto* a = attempt(s, d.attempt);
  if (!a) return;
  a->task_job_id = d.job_id;
  if (d.how == "fallback") a->resume_from = d.resume_from.value_or(a->resume_from);
}

// The chain ran out of tasks before one took the attempt: it is submitted again, under a new tag.
void on_chain_exhausted(CampaignState& s, const rec::ChainExhausted& d, const JournalRecord&) {
  auto* a = attempt(s, d.attempt);
  if (!a) return;
  a->job_id.reset();
  a->tag = d.tag.value_or(a->tag);
}

void on_cancel_intent(CampaignState& s, const rec::CancelIntent& d, const JournalRecord&) {
  if (auto* a = attempt(s, d.attempt)) {
    a->cancel_reason = d.cls;
    a->steps_only = d.steps_only;
    if (!d.evidence_rule.empty())
      a->cancel_evidence = CancelEvidence{d.evidence_rule, d.evidence_class, d.evidence_action, d.evidence_quote, d.evidence_line};
  }
}

// Spare nodes: the job took the attempt, on these nodes.
void on_step_claimed(CampaignState& s, const rec::StepClaimed& d, const JournalRecord&) {
  if (auto* a = attempt(s, d.attempt)) {
    a->step_claimed = true;
    a->step_nodes = d.nodes;
  }
}

// An attempt that got past the checkpoint it resumed from shows that checkpoint good.
void note_proven(CampaignState& s, const AttemptState& a) {
  const bool got_past = a.progressed;
  if (got_past) s.quarantined_in_a_row = 0;
  if (a.resume_from.empty() || !got_past || a.resume_step < s.proven_step) return;
  s.proven_checkpoint = a.resume_from;
  s.proven_step = a.resume_step;
}

// What status and the report show of an ending: when, on which nodes, in which Slurm state, its step times.
void note_end(AttemptState& a, const rec::Ended& d, const JournalRecord& r) {
  a.ended_at = r.time;
  a.end_nodes = d.nodes;
  const auto state = r.data.find("slurm_state");
  a.end_slurm_state = state != r.data.end() && state->is_string() ? state->get<std::string>() : "";
  if (!r.data.contains("last_progress_at")) return;
  a.step_times = true;
  a.first_step_at = d.first_step_at;
  a.last_progress_at = d.last_progress_at;
}

void on_ended(CampaignState& s, const rec::Ended& d, const JournalRecord& r) {
  auto* a = attempt(s, d.attempt);
  if (!a) return;
  a->ended = true;
  a->end_class = d.cls;
  a->end_step = d.step;
  a->progressed = a->end_step > a->resume_step || d.progressed;
  a->explained = !d.evidence_rule.empty();
  note_end(*a, d, r);
  note_proven(s, *a);
  if (a->end_class && decide::row(*a->end_class).counts_for_blame && !d.follows_training && !d.no_node_blamed) {
    const auto& suspects = d.suspects ? *d.suspects : std::vector<std::string>{};
    s.failures.push_back({r.time, suspects.empty() ? slurm::expand_hostlist(d.nodes) : suspects});
  }
  if (d.action != decide::Action::Resubmit) return;
  s.restarts.push_back({r.time, a->end_class.value_or(decide::EndClass::Failed), d.progressed, d.new_exclusion});
  s.next_submit_at = r.time + d.delay;
  s.awaiting_submit = true;
}

void on_quarantined(CampaignState& s, const rec::Quarantined& d, const JournalRecord&) {
  s.quarantined.push_back(d.path);
  ++s.quarantined_in_a_row;
  if (!s.restarts.empty()) s.restarts.back().fell_back = true;  // the ending it follows: no crash loop counted
  if (s.proven_checkpoint == d.path) {
    s.proven_checkpoint.clear();
    s.proven_step = -1;
  }
}

// A live exclusion ended at t, before its time; how, in words.
void end_early(decide::Exclusion& e, double t, std::string how) {
  if (e.until <= t) return;
  e.until = t;
  e.ended_by = std::move(how);
}

// An exclusion dropped from a pending job: gone from that attempt and, as tried, from the ledger.
void on_relaxed(CampaignState& s, const rec::Relaxed& d, const JournalRecord& r) {
  if (auto* a = attempt(s, d.attempt)) {
    std::erase(a->exclude, d.node);
    a->relaxed_at = r.time;
    ++a->relaxed;
  }
  for (auto& e : s.ledger)
    if (e.node == d.node) end_early(e, r.time, "relaxed so that attempt " + std::to_string(d.attempt) + "'s waiting job could start");
}

void on_exclude(CampaignState& s, const rec::Exclude& d, const JournalRecord& r) {
  s.ledger.push_back({d.node, d.reason, r.time, d.until, d.gpus, ""});
  s.ledger_attempts.push_back(d.attempt);
  if (d.first_evidence()) s.rule_exclusions.push_back({s.ledger.size() - 1, {d.node, d.rank, d.step}});
}

// A failure found to follow the training: the rule's exclusions of the nodes named end now.
void on_exclusion_lifted(CampaignState& s, const rec::ExclusionLifted& d, const JournalRecord& r) {
  s.training_faults.push_back({d.rank, d.step, d.tolerance});
  for (const auto& m : s.rule_exclusions)
    if (std::find(d.lifted.begin(), d.lifted.end(), m.failure.node) != d.lifted.end())
      end_early(s.ledger[m.entry], r.time, "lifted: the failure follows the training, not the node");
}

// An excluded node's GPUs found in another node: the node's exclusions that carry them end, and the
// other node is excluded in their place.
void on_exclusion_moved(CampaignState& s, const rec::ExclusionMoved& d, const JournalRecord& r) {
  for (auto& e : s.ledger)
    if (e.node == d.from && std::any_of(e.gpus.begin(), e.gpus.end(), [&](const std::string& g) {
          return std::find(d.gpus.begin(), d.gpus.end(), g) != d.gpus.end();
        }))
      end_early(e, r.time, "its GPUs were found in " + d.to + ": the exclusion followed them there");
  s.ledger.push_back({d.to, d.reason, r.time, d.until, d.gpus, ""});
  s.ledger_attempts.push_back(d.attempt);
}

void on_finished(CampaignState& s, const rec::Finished& d, const JournalRecord& r) {
  s.finished_at = r.time;
  s.finished_code = d.code;
  s.finished_reason = d.reason;
  s.awaiting_submit = false;
}

// `mlsup resume`: the campaign reopened; budgets and the crash-loop count start afresh from here, and
// a submission that kept failing is tried again.
void on_resumed(CampaignState& s, const rec::Resumed& d, const JournalRecord& r) {
  s.requests_done.insert(d.request);
  s.finished_code.reset();
  s.finished_reason.clear();
  s.finished_at = 0;  // its time figures run on
  s.paused = s.pause_now = s.cancel_requested = false;
  s.restarts.clear();
  s.restarts_earlier.clear();
  s.resume_point = d.from;
  s.resume_point_step = d.from_step;
  auto* a = s.attempts.empty() ? nullptr : &s.attempts.back();
  if (a && a->ended) {
    s.awaiting_submit = true;
    s.next_submit_at = r.time;
  }
  if (a && !a->ended && !a->job_id) a->submit_failures.clear();
}

void on_paused(CampaignState& s, const rec::Paused& d, const JournalRecord&) {
  s.requests_done.insert(d.request);
  s.paused = true;
  s.pause_now = s.pause_now || d.now;
}

void on_cancel_requested(CampaignState& s, const rec::CancelRequested& d, const JournalRecord&) {
  s.requests_done.insert(d.request);
  s.cancel_requested = true;
}

// `mlsup unexclude`: the node's live exclusions end now; the next submission may use it.
void on_unexcluded(CampaignState& s, const rec::Unexcluded& d, const JournalRecord& r) {
  s.requests_done.insert(d.request);
  for (auto& e : s.ledger)
    if (e.node == d.node) end_early(e, r.time, "unexcluded by " + (d.by.empty() ? std::string("?") : d.by) + (d.why.empty() ? "" : ": " + d.why));
}

void on_request_refused(CampaignState& s, const rec::RequestRefused& d, const JournalRecord&) { s.requests_done.insert(d.request); }

void on_held(CampaignState& s, const rec::Held& d, const JournalRecord&) {
  if (auto* a = attempt(s, d.attempt)) {
    a->held = true;
    a->held_for = d.for_;
  }
}

void on_released(CampaignState& s, const rec::Released& d, const JournalRecord&) {
  if (auto* a = attempt(s, d.attempt)) {
    a->held = false;
    a->held_for.clear();
  }
}

void on_switch_set(CampaignState& s, const rec::SwitchSet& d, const JournalRecord& r) {
  if (auto* a = attempt(s, d.attempt)) {
    a->switch_set_at = r.time;
    a->switch_for = d.for_;
  }
}

void on_switch_cleared(CampaignState& s, const rec::SwitchCleared& d, const JournalRecord&) {
  if (auto* a = attempt(s, d.attempt)) {
    a->switch_set_at = 0;
    a->switch_for.clear();
  }
}

// The table's row for record type R: its name, and its struct read then applied.
template <class R>
std::pair<const std::string, Apply> on(void (*f)(CampaignState&, const R&, const JournalRecord&)) {
  return {std::string(R::kType), [f](CampaignState& s, const JournalRecord& r) { f(s, r.data.get<R>(), r); }};
}

const std::map<std::string, Apply>& appliers() {
  static const std::map<std::string, Apply> table = {
      on(on_campaign),        on(on_submit_intent),   on(on_submitted),       on(on_adopted),
      on(on_submit_failed),   on(on_sbatch_started),  on(on_sbatch_awaited),  on(on_sbatch_ended),
      on(on_spares_dropped),  on(on_cancel_intent),   on(on_pending_alert),   on(on_ended),
      on(on_finished),        on(on_relaxed),         on(on_claimed),         on(on_step_claimed),
      on(on_chain_exhausted), on(on_resumed),         on(on_paused),          on(on_cancel_requested),
      on(on_unexcluded),      on(on_request_refused), on(on_held),            on(on_released),
      on(on_switch_set),      on(on_switch_cleared),  on(on_exclude),         on(on_exclusion_lifted),
      on(on_exclusion_moved), on(on_quarantined),
  };
  return table;
}

// A record that could not be applied (why: the JSON library's complaint), as an error that says where
// and what to do.
util::Error unusable(const JournalRecord& r, const std::string& path, std::string why) {
  if (const auto end = why.find("] "); why.starts_with("[json.exception.") && end != std::string::npos) why.erase(0, end + 2);
  return util::Error{.file = path, .line = r.line, .subject = r.type + " record",
                     .message = "a field has the wrong type (" + why + "); repair this record by hand or restore the "
                                "journal, then start mlsup again; until then nothing is done for this campaign"};
}

}  // namespace

void apply(CampaignState& s, const JournalRecord& r, const std::string& path) {
  if (s.began == 0) s.began = r.time;
  const auto it = appliers().find(r.type);
  if (it == appliers().end()) return;
  try {
    it->second(s, r);
  } catch (const nlohmann::json::exception& e) {
    s.problems.push_back(unusable(r, path, e.what()));
  }
}

CampaignState replay(const std::vector<JournalRecord>& records, const std::string& path) {
  CampaignState s;
  for (const auto& r : records) apply(s, r, path);
  return s;
}

Progress progress(const CampaignState& s) {
  const AttemptState* a = s.current();
  return {s.awaiting_submit, a ? a->number : 0, a ? a->submit_failures.size() : 0};
}

}  // namespace mlsup::engine
