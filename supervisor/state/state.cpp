#include "state/state.h"

#include <algorithm>
#include <functional>
#include <map>

#include "decide/classes.h"
#include "slurm_model/types.h"

namespace mlsup::engine {
namespace {

using Apply = std::function<void(CampaignState&, const JournalRecord&)>;

AttemptState* attempt(CampaignState& s, const nlohmann::json& d) {
  const int n = d.value("attempt", 0);
  for (auto& a : s.attempts)
    if (a.number == n) return &a;
  return nullptr;
}

void on_submit_intent(CampaignState& s, const JournalRecord& r) {
  AttemptState a;
  a.number = r.data.value("attempt", 0);
  a.tag = r.data.value("tag", "");
  a.resume_from = r.data.value("resume_from", "");
  a.resume_step = r.data.value("resume_step", 0LL);
  a.exclude = r.data.value("exclude", std::vector<std::string>{});
  a.intent_time = r.time;
  a.chain = r.data.value("chain", false);
  if (const auto chain_job = r.data.value("chain_job", 0u)) a.job_id = chain_job;  // the next task of a queued chain
  if (const auto job = r.data.value("in_job", 0u)) {  // spare nodes: the job that ran the attempt before runs it
    a.job_id = job;
    a.in_job = true;
    a.step_nodes = r.data.value("step_nodes", std::vector<std::string>{});
  }
  s.attempts.push_back(std::move(a));
  s.awaiting_submit = false;
  s.resume_point.clear();  // taken by this submission
}

void on_submitted(CampaignState& s, const JournalRecord& r) {
  auto* a = attempt(s, r.data);
  if (!a) return;
  a->job_id = r.data.value("job_id", 0u);
  if (r.type == "submitted") ++a->submissions;
  if (r.type == "adopted") a->uncertain = true;  // found by its tag: another sbatch of it may have run too
  a->submit_failures.clear();
  a->chain = r.data.value("chain", a->chain);
  a->sbatch.reset();
  a->sbatch_awaited = 0;
  if (r.data.value("held", false)) {  // submitted held: released once the journal has it
    a->held = true;
    a->held_for = "submission";
  }
}

void on_sbatch_started(CampaignState& s, const JournalRecord& r) {
  if (auto* a = attempt(s, r.data))
    a->sbatch = SbatchRun{r.data.value("pid", 0),          r.data.value("start_ticks", 0LL), r.data.value("host", ""),
                          r.data.value("boot_id", ""),     r.time,                           r.data.value("server_time", 0.0)};
}

// An earlier supervisor's sbatch is waited for (sbatch-awaited), or its end is known (sbatch-ended).
void on_sbatch_awaited(CampaignState& s, const JournalRecord& r) {
  if (auto* a = attempt(s, r.data)) {
    a->sbatch_awaited = r.data.value("pid", 0);
    a->uncertain = true;
  }
}

void on_sbatch_ended(CampaignState& s, const JournalRecord& r) {
  if (auto* a = attempt(s, r.data)) {
    a->sbatch.reset();
    a->sbatch_awaited = 0;
    a->uncertain = true;
  }
}

void on_submit_failed(CampaignState& s, const JournalRecord& r) {
  if (auto* a = attempt(s, r.data)) {
    a->sbatch.reset();
    a->uncertain = a->uncertain || decide::outcome_unknown(slurm::error_kind_from_name(r.data.value("kind", "")));
    a->submit_failures.push_back({r.time, slurm::error_kind_from_name(r.data.value("kind", "")), r.data.value("message", "")});
    ++a->failed_submissions;
  }
}

// A chain task took the attempt; with values it found for itself when mlsup was away, its resume point.
void on_claimed(CampaignState& s, const JournalRecord& r) {
  auto* a = attempt(s, r.data);
  if (!a) return;
  a->task_job_id = r.data.value("job_id", 0u);
  if (r.data.value("how", "") == "fallback") a->resume_from = r.data.value("resume_from", a->resume_from);
}

// The chain ran out of tasks before one took the attempt: it is submitted again, under a new tag.
void on_chain_exhausted(CampaignState& s, const JournalRecord& r) {
  auto* a = attempt(s, r.data);
  if (!a) return;
  a->job_id.reset();
  a->tag = r.data.value("tag", a->tag);
}

void on_cancel_intent(CampaignState& s, const JournalRecord& r) {
  if (auto* a = attempt(s, r.data)) {
    a->cancel_reason = decide::class_from_name(r.data.value("class", ""));
    a->steps_only = r.data.value("steps_only", false);
  }
}

// Spare nodes: the job took the attempt, on these nodes.
void on_step_claimed(CampaignState& s, const JournalRecord& r) {
  if (auto* a = attempt(s, r.data)) {
    a->step_claimed = true;
    a->step_nodes = r.data.value("nodes", std::vector<std::string>{});
  }
}

// An attempt that got past the checkpoint it resumed from shows that checkpoint good.
void note_proven(CampaignState& s, const AttemptState& a, const JournalRecord& r) {
  const bool got_past = a.end_step > a.resume_step || r.data.value("progressed", false);
  if (a.resume_from.empty() || !got_past || a.resume_step < s.proven_step) return;
  s.proven_checkpoint = a.resume_from;
  s.proven_step = a.resume_step;
}

void on_ended(CampaignState& s, const JournalRecord& r) {
  auto* a = attempt(s, r.data);
  if (!a) return;
  a->ended = true;
  a->end_class = decide::class_from_name(r.data.value("class", ""));
  a->end_step = r.data.value("step", -1LL);
  note_proven(s, *a, r);
  if (a->end_class && decide::row(*a->end_class).counts_for_blame && !r.data.value("follows_training", false)) {
    auto suspects = r.data.value("suspects", std::vector<std::string>{});
    s.failures.push_back({r.time, suspects.empty() ? slurm::expand_hostlist(r.data.value("nodes", "")) : suspects});
  }
  if (r.data.value("action", "") != decide::action_name(decide::Action::Resubmit)) return;
  s.restarts.push_back({r.time, a->end_class.value_or(decide::EndClass::Failed), r.data.value("progressed", false),
                        r.data.value("new_exclusion", false)});
  s.next_submit_at = r.time + r.data.value("delay", 0.0);
  s.awaiting_submit = true;
}

// An exclusion dropped from a pending job: gone from that attempt and, as tried, from the ledger.
void on_relaxed(CampaignState& s, const JournalRecord& r) {
  const std::string node = r.data.value("node", "");
  if (auto* a = attempt(s, r.data)) {
    std::erase(a->exclude, node);
    a->relaxed_at = r.time;
    ++a->relaxed;
  }
  for (auto& e : s.ledger)
    if (e.node == node) e.until = std::min(e.until, r.time);
}

void on_exclude(CampaignState& s, const JournalRecord& r) {
  const auto at = r.data.find("attempt");  // for status only, so a bad one is no problem: 0
  const int number = at != r.data.end() && at->is_number_integer() ? at->get<int>() : 0;
  s.ledger.push_back({r.data.value("node", ""), r.data.value("reason", ""), r.time, r.data.value("until", 0.0)});
  s.ledger_attempts.push_back(number);
  if (r.data.value("rule", "") == "first_evidence")
    s.rule_exclusions.push_back({s.ledger.size() - 1, {r.data.value("node", ""), r.data.value("rank", -1),
                                                       r.data.value("step", 0LL)}});
}

// A failure found to follow the training: the rule's exclusions of the nodes named end now.
void on_exclusion_lifted(CampaignState& s, const JournalRecord& r) {
  s.training_faults.push_back({r.data.value("rank", -1), r.data.value("step", 0LL), r.data.value("tolerance", 0LL)});
  const auto nodes = r.data.value("lifted", std::vector<std::string>{});
  for (const auto& m : s.rule_exclusions)
    if (std::find(nodes.begin(), nodes.end(), m.failure.node) != nodes.end())
      s.ledger[m.entry].until = std::min(s.ledger[m.entry].until, r.time);
}

void on_finished(CampaignState& s, const JournalRecord& r) {
  s.finished_code = r.data.value("code", 0);
  s.finished_reason = r.data.value("reason", "");
  s.awaiting_submit = false;
}

// `mlsup resume`: the campaign reopened; budgets and the crash-loop count start afresh from here, and
// a submission that kept failing is tried again.
void on_resumed(CampaignState& s, const JournalRecord& r) {
  s.requests_done.insert(r.data.value("request", ""));
  s.finished_code.reset();
  s.finished_reason.clear();
  s.paused = s.pause_now = s.cancel_requested = false;
  s.restarts.clear();
  s.resume_point = r.data.value("from", "");
  s.resume_point_step = r.data.value("from_step", 0LL);
  auto* a = s.attempts.empty() ? nullptr : &s.attempts.back();
  if (a && a->ended) {
    s.awaiting_submit = true;
    s.next_submit_at = r.time;
  }
  if (a && !a->ended && !a->job_id) a->submit_failures.clear();
}

void on_paused(CampaignState& s, const JournalRecord& r) {
  s.requests_done.insert(r.data.value("request", ""));
  s.paused = true;
  s.pause_now = s.pause_now || r.data.value("now", false);
}

void on_cancel_requested(CampaignState& s, const JournalRecord& r) {
  s.requests_done.insert(r.data.value("request", ""));
  s.cancel_requested = true;
}

void on_held(CampaignState& s, const JournalRecord& r) {
  if (auto* a = attempt(s, r.data)) {
    a->held = r.type == "held";
    a->held_for = a->held ? r.data.value("for", "pause") : "";
  }
}

void on_switch_set(CampaignState& s, const JournalRecord& r) {
  if (auto* a = attempt(s, r.data)) {
    a->switch_set_at = r.time;
    a->switch_for = r.data.value("for", "");
  }
}

void on_switch_cleared(CampaignState& s, const JournalRecord& r) {
  if (auto* a = attempt(s, r.data)) {
    a->switch_set_at = 0;
    a->switch_for.clear();
  }
}

const std::map<std::string, Apply>& appliers() {
  static const std::map<std::string, Apply> table = {
      {"campaign", [](CampaignState& s, const JournalRecord& r) { s.campaign_id = r.data.value("id", ""); }},
      {"submit-intent", on_submit_intent},
      {"submitted", on_submitted},
      {"submit-failed", on_submit_failed},
      {"sbatch-started", on_sbatch_started},
      {"sbatch-awaited", on_sbatch_awaited},
      {"sbatch-ended", on_sbatch_ended},
      {"spares-dropped",
       [](CampaignState& s, const JournalRecord& r) {
         if (auto* a = attempt(s, r.data)) a->spares_dropped = true;
       }},
      {"adopted", on_submitted},
      {"cancel-intent", on_cancel_intent},
      {"pending-alert",
       [](CampaignState& s, const JournalRecord& r) {
         if (auto* a = attempt(s, r.data)) a->pending_alerted = true;
       }},
      {"ended", on_ended},
      {"finished", on_finished},
      {"relaxed", on_relaxed},
      {"claimed", on_claimed},
      {"step-claimed", on_step_claimed},
      {"chain-exhausted", on_chain_exhausted},
      {"resumed", on_resumed},
      {"paused", on_paused},
      {"cancel-requested", on_cancel_requested},
      {"request-refused",
       [](CampaignState& s, const JournalRecord& r) { s.requests_done.insert(r.data.value("request", "")); }},
      {"held", on_held},
      {"released", on_held},
      {"switch-set", on_switch_set},
      {"switch-cleared", on_switch_cleared},
      {"exclude", on_exclude},
      {"exclusion-lifted", on_exclusion_lifted},
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
