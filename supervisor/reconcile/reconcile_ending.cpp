// An attempt's job ended (or Slurm forgot it): the ending judged whole, the nodes it blames, and
// what follows: the campaign's end, or the next attempt after a backoff. Pure (reconcile/reconcile.h).
#include <algorithm>
#include <cctype>
#include <csignal>

#include "config/duration.h"
#include "decide/ending.h"
#include "decide/evidence_ending.h"
#include "decide/fallback.h"
#include "decide/pending.h"
#include "reconcile/reconcile_pass.h"
#include "decide/recall.h"
#include "observe/end_record.h"
#include "observe/node_records.h"
#include "util/strings.h"

namespace mlsup::engine::reconcile_parts {
using nlohmann::json;

namespace {

// How far an ended attempt got.
struct Reached {
  long long step = 0, checkpoint_step = 0;
  bool progressed = false;
};

// The `ended` record's account of the ending: what ended, how it is classed, how far it got, what was
// decided and why (beside the evidence blamed() put in it).
void describe(records::Ended& e, const AttemptState& a, const slurm::Job& job, decide::EndClass cls, const Reached& r,
              const decide::Decision& d) {
  e.attempt = a.number;
  e.job_id = job.job_id;
  e.cls = cls;
  e.slurm_state = job.state;
  e.exit_code = job.exit_code;
  e.signal = job.exit_signal;
  e.nodes = job.nodes;
  e.step = r.step;
  e.checkpoint_step = r.checkpoint_step;
  e.resumed_from = a.resume_from;
  e.progressed = r.progressed;
  e.action = d.action;
  e.delay = d.delay_seconds;
  e.reason = d.reason;
}

// A task number as srun wrote it ("1"); -1 for a range or a list ("0-3").
int single_rank(const std::string& tasks) {
  if (tasks.empty() || tasks.size() > 9 || !std::all_of(tasks.begin(), tasks.end(), [](unsigned char ch) { return std::isdigit(ch) != 0; })) return -1;
  return std::stoi(tasks);
}

// What the ending says of each node of the job: Slurm's node states, srun's task reports and the
// SPANK plugin's records (the first failing task of the job's steps, the failed health checks); and
// the first failing task's node and rank when one is named (first_end).
std::vector<decide::NodeEvidence> node_evidence(Pass& p, const slurm::Job& job, records::Ended& ended,
                                                std::optional<decide::FirstEnd>& first_end) {
  std::vector<decide::NodeEvidence> evidence;
  const auto* all = p.w.nodes && *p.w.nodes ? &**p.w.nodes : nullptr;
  for (const auto& name : slurm::expand_hostlist(job.nodes)) {
    decide::NodeEvidence e{name};
    if (all) {
      for (const auto& n : *all)
        if (n.name == name) e = {name, n.kept_off(), n.not_responding};
    }
    evidence.push_back(e);
  }
  if (!p.w.ending) return evidence;
  const auto& out = *p.w.ending;
  if (!out.records.problems.empty())
    p.report(events::NodeRecordsProblems{job.job_id, out.records.problems,
                                         "the readable records are used; the others are ignored"});
  std::vector<observe::TaskExit> step_exits;  // the batch script and the extern step fail as a consequence
  for (const auto& x : out.records.exits)
    if (x.step >= 0) step_exits.push_back(x);
  const auto first = observe::first_failure(step_exits);
  const auto sick = observe::failed_health(out.records.health);
  // The plugin's clocks order the ends; without its records, the order of srun's reports does.
  const auto* srun = first ? nullptr : out.srun_first ? &*out.srun_first : nullptr;
  for (auto& e : evidence) {
    e.failed_first = first && first->node == e.name;
    e.task_failed = srun && srun->report.node == e.name;
    if (e.failed_first) e.first_weak = decide::weak_end(first->exit_code, first->signal);
    if (e.task_failed) e.first_weak = decide::weak_end(srun->report.exit_code, srun->report.signo);
    e.first_killed = (e.failed_first && first->signal == SIGKILL) || (e.task_failed && srun->report.signo == SIGKILL);
    e.health_failed = std::find(sick.begin(), sick.end(), e.name) != sick.end();
  }
  if (first) first_end = decide::FirstEnd{first->node, first->rank};
  if (srun) first_end = decide::FirstEnd{srun->report.node, single_rank(srun->report.tasks)};
  auto& fields = ended.evidence;
  if (first)
    fields["first_failure"] = {{"node", first->node}, {"step", first->step}, {"rank", first->rank},
                               {"exit_code", first->exit_code}, {"signal", first->signal}};
  if (srun) {
    fields["first_reported"] = {{"node", srun->report.node}, {"tasks", srun->report.tasks},
                                {"exit_code", srun->report.exit_code}, {"signal", srun->report.signal}};
    fields["victims"] = srun->victims;
  }
  if (!sick.empty()) fields["health_failed"] = sick;
  return evidence;
}

// The first-evidence rule's weighing of a failure's first end, the checkpoint interval its tolerance.
FirstWeighed weigh(const Pass& p, decide::FirstEnd end) {
  std::vector<long long> steps;
  if (p.w.checkpoints)
    for (const auto& c : p.w.checkpoints->checkpoints)
      if (c.complete) steps.push_back(c.step);
  auto verdict = decide::weigh_first_end(end, p.s.training_faults, p.s.rule_exclusions, p.s.ledger, p.wall(),
                                         decide::step_interval(std::move(steps)));
  return {std::move(end), std::move(verdict)};
}

// True when a node was excluded for the attempt already (a hang's, when it was cancelled).
bool excluded_for(const CampaignState& s, int attempt) {
  return std::find(s.ledger_attempts.begin(), s.ledger_attempts.end(), attempt) != s.ledger_attempts.end();
}

// A hang's finding as its cancel recorded it (its output then, before the cancel added lines of its own).
std::optional<decide::Finding> hang_finding(const AttemptState& a) {
  if (!a.cancel_evidence) return std::nullopt;
  const auto& e = *a.cancel_evidence;
  return decide::Finding{.rule = e.rule, .cls = e.cls, .action = decide::rule_action_named(e.action),
                         .line_number = static_cast<std::size_t>(e.line), .line = e.quote};
}

// The finding of the evidence rules (the config's, then the shipped) over the tail of a failed job's
// output, or a hang's at its cancel; nullopt when the ending is no failure its output explains, or no rule matches.
std::optional<decide::Finding> explained(const Pass& p, const AttemptState& a, decide::EndClass cls) {
  if (cls == decide::EndClass::Hang) return hang_finding(a);
  if (!p.w.ending || !decide::explained_by_output(cls)) return std::nullopt;
  const auto rules = decide::all_rules(p.c.evidence.rules);
  return decide::explain_ending(cls, rules, p.w.ending->tail);
}

// The `ended` record's account of a finding: the rule, its class and action, the line quoted.
void note_finding(records::Ended& e, const decide::Finding& f) {
  e.evidence_rule = f.rule;
  e.evidence_class = f.cls;
  e.evidence_action = std::string(decide::rule_action_name(f.action));
  e.evidence_line = static_cast<int>(f.line_number);
  e.evidence_quote = util::valid_utf8(f.line);  // a quote cut short may end inside a character
  if (!decide::stops(f)) e.reason += "; " + decide::finding_words(f) + (e.no_node_blamed ? ": no node is held responsible" : "");
}

// Each node's other names: as Slurm gives them (NodeAddr, NodeHostname) where the pass read the nodes, and
// every interface's address the plugin saw on it in the ended job (NCCL talks over the data network). An
// address several nodes share (one host's) names none of them (decide::node_of_address).
std::map<std::string, std::vector<std::string>> node_names(const Pass& p) {
  std::map<std::string, std::vector<std::string>> out;
  if (p.w.nodes && *p.w.nodes) out = slurm::other_names(**p.w.nodes);
  if (!p.w.ending) return out;
  for (const auto& [node, facts] : observe::latest_facts(p.w.ending->records.facts)) {
    auto& names = out[node];
    names.insert(names.end(), facts.addresses.begin(), facts.addresses.end());
  }
  return out;
}

// The exclusions a finding decides: none, or the one node its line (or a one-node job's log) names;
// nullopt when the nodes are blamed as without it. The suspects the record keeps follow it.
std::optional<std::vector<intent::Exclude>> by_finding(const Pass& p, const AttemptState& a, const slurm::Job& job,
                                                       const decide::Finding& f, records::Ended& ended) {
  const auto nodes = slurm::expand_hostlist(job.nodes);
  const auto named = decide::finding_nodes(f, nodes, node_names(p), p.w.ending ? p.w.ending->rank_nodes : std::vector<std::string>{});
  if (named.blame == decide::FindingBlame::AsBefore) return std::nullopt;
  if (named.blame == decide::FindingBlame::NoNode) {
    ended.no_node_blamed = true;
    ended.suspects = std::vector<std::string>{};
    return std::vector<intent::Exclude>{};
  }
  ended.suspects = std::vector<std::string>{named.node};
  const double until = p.wall() + static_cast<double>(p.c.policy.exclusion_ttl.count());
  const decide::Blamed b{named.node, decide::finding_words(f) + ": " + named.node + " is kept out", false};
  return std::vector<intent::Exclude>{{a.number, b, until, {}, "evidence:" + f.rule}};
}

// The nodes an ending other than a hang blames (a hang was judged when it was cancelled), with the
// evidence's fields for the `ended` record; a failure that follows the training lifts the rule's exclusions.
// A finding of the evidence rules that holds no node, or one node, responsible decides alone.
std::vector<intent::Exclude> blamed(Pass& p, const AttemptState& a, const slurm::Job& job, const decide::EndingVerdict& v,
                                    records::Ended& ended, const std::optional<decide::Finding>& finding) {
  if (v.cls == decide::EndClass::Hang || !decide::node_related(v.cls)) return {};
  std::optional<decide::FirstEnd> first;
  const auto evidence = node_evidence(p, job, ended, first);
  ended.suspects = decide::suspects(evidence);
  if (finding)
    if (auto decided = by_finding(p, a, job, *finding, ended)) return std::move(*decided);
  std::optional<FirstWeighed> weighed;
  if (first && v.cls == decide::EndClass::Failed && evidence.size() > 1) {
    first->step = v.step;
    weighed = weigh(p, *first);
    if (weighed->verdict.follows_training) ended.follows_training = true;
    if (weighed->verdict.found) p.add(intent::Lift{a.number, weighed->verdict.lift, *weighed->verdict.found});
  }
  return blame_exclusions(p.s, a.number, v.cls, evidence, p.c, p.wall(), weighed);
}

// A resubmission that brings its restart budget to notify.budget_warn_at percent is told (an alert).
void warn_budget(Pass& p, const AttemptState& a, decide::EndClass cls) {
  const auto use = decide::budget_use(cls, p.s.restarts, p.c, p.wall());
  if (!use || !decide::nearly_spent(*use, p.c.notify.budget_warn_at)) return;
  const std::string per = std::to_string(use->count) + " per " + config::format_duration(use->window);
  const int left = use->count - use->used;
  const std::string then = left == 0 ? "the next such ending stops the campaign"
                                     : std::to_string(left) + " restart" + (left == 1 ? "" : "s") + " left";
  p.report(events::BudgetNearlySpent{
      a.number, use->budget, use->used, use->count, config::format_duration(use->window),
      "the " + use->budget + " budget (" + per + ") is nearly spent: " + std::to_string(use->used) + " used, " + then});
}

// When the attempt first stepped past its resume point and last progressed, on the wall clock (0: not seen):
// the time lost to its failure is measured from them (views/status_view.h).
void step_times(const Pass& p, const AttemptState& a, records::Ended& ended) {
  if (p.m.attempt != a.number || p.m.first_step_at <= 0) return;
  ended.first_step_at = p.m.first_step_wall > 0 ? p.m.first_step_wall : wall_of(p.m.first_step_at, p.w.now);
  ended.last_progress_at =
      p.m.last_progress_wall > 0 ? p.m.last_progress_wall : wall_of(combined(p.m.heartbeat).progress_at, p.w.now);
}

// Whether this ending calls for a fallback from the checkpoint a resumed from (decide/fallback.h).
decide::Fallback fallback_due(const Pass& p, const AttemptState& a, const decide::EndingVerdict& v, bool new_exclusion) {
  decide::FallbackFacts f{.quarantined_in_a_row = p.s.quarantined_in_a_row,
                          .after = p.c.checkpoint.fallback_after,
                          .max_quarantined = p.c.checkpoint.max_quarantined};
  for (const auto& q : p.s.attempts) {
    if (!q.ended || q.number == a.number) continue;
    f.attempts.push_back({q.resume_from, q.end_class && decide::may_show_bad_checkpoint(*q.end_class) && q.end_step <= q.resume_step});
  }
  f.attempts.push_back({a.resume_from, decide::may_show_bad_checkpoint(v.cls) && !new_exclusion && !v.progressed &&
                                           v.step <= a.resume_step});
  return decide::fallback(f);
}

// The checkpoint a resumed from is to be moved aside (Quarantine, returned: added after the ending), or the
// campaign gives up (GiveUp): the verdict says so, and a quarantine's ending is judged with the crash-loop
// count started afresh.
std::optional<intent::Quarantine> fall_back(const Pass& p, const AttemptState& a, decide::Fallback f,
                                            const decide::EndingFacts& facts, decide::EndingVerdict& v) {
  const std::string failed = "attempts resuming from " + a.resume_from + " failed " +
                             std::to_string(p.c.checkpoint.fallback_after) + " times in a row before any step";
  if (f == decide::Fallback::GiveUp) {
    v.decision = {decide::Action::Stop, decide::kBudgetSpent, 0,
                  failed + ", and " + std::to_string(p.s.quarantined_in_a_row) +
                      " checkpoints were quarantined in a row already (checkpoint.max_quarantined): the checkpoints "
                      "or the training are broken; fix it, then `mlsup resume` (--from a checkpoint you trust)"};
    return std::nullopt;
  }
  auto restarts = p.s.restarts;
  if (!restarts.empty()) restarts.back().fell_back = true;  // the crash-loop count starts afresh at this ending
  v = decide::judge_ending(facts, restarts, p.c, p.wall());
  const auto older = newest_usable(p, a.resume_step);
  const std::string next = older ? older->path : "a fresh start (no older complete checkpoint)";
  v.decision.reason += "; " + failed + ": it is quarantined and the next attempt resumes from " + next;
  return intent::Quarantine{a.number, a.resume_from, a.resume_step, failed + ": quarantined; the next attempt resumes from " + next};
}

// Each node's GPUs as the plugin saw them in the ended job ({} when its records said nothing of them).
std::map<std::string, std::vector<slurm::Gpu>> job_gpus(const Pass& p) {
  std::map<std::string, std::vector<slurm::Gpu>> out;
  if (!p.w.ending) return out;
  for (auto& [node, facts] : observe::latest_facts(p.w.ending->records.facts))
    if (!facts.gpus.empty()) out[node] = facts.gpus;
  return out;
}

// The text that may name a blamed node's GPU: the rule's line, else its failed health check's detail.
std::string gpu_evidence(const Pass& p, const std::string& node, const std::optional<decide::Finding>& f) {
  if (f) return f->line;
  if (!p.w.ending) return "";
  for (const auto& h : p.w.ending->records.health)
    if (!h.ok && h.node == node) return h.detail;
  return "";
}

// The GPUs each exclusion carries (decide::carried_gpus), and the exclusions that follow their GPUs to
// another node of this job.
void follow_gpus(Pass& p, const AttemptState& a, std::vector<intent::Exclude>& exclusions,
                 const std::optional<decide::Finding>& f) {
  const auto gpus = job_gpus(p);
  if (gpus.empty()) return;
  for (auto& e : exclusions)
    if (const auto it = gpus.find(e.blamed.node); it != gpus.end())
      e.gpus = decide::carried_gpus(gpu_evidence(p, e.blamed.node, f), it->second);
  for (auto& m : decide::moved_exclusions(p.s.ledger, p.wall(), gpus)) p.add(intent::MoveExclusion{a.number, std::move(m)});
}

}  // namespace

void end(Pass& p, const AttemptState& a, const slurm::Job& seen, bool vanished, bool chain_goes_on,
         std::string_view source, std::string_view gone) {
  slurm::Job job = seen;  // a job Slurm forgot (or shows without nodes) keeps the nodes it was seen running on
  if (job.nodes.empty() && p.m.attempt == a.number) job.nodes = p.m.running_nodes;
  const auto before = combined(p.m.heartbeat);
  if (p.w.heartbeat) observe(p.m.heartbeat, *p.w.heartbeat, p.mono());  // its last word
  if (p.m.attempt == a.number) {
    note_step_times(p, a, before);
    const double written = p.w.heartbeat_written_at > 0 ? p.mono() - (p.wall() - p.w.heartbeat_written_at) : 0;
    learn_last_save(p.m.pace, combined(p.m.heartbeat), written, p.mono());  // a save at the signal, then the exit
  }
  const auto newest = p.w.checkpoints ? checkpoint::newest_complete(*p.w.checkpoints) : std::nullopt;
  decide::EndingFacts facts{job.state, job.exit_code, job.exit_signal, vanished, a.cancel_reason, p.w.kill_switch,
                            combined(p.m.heartbeat).step, newest ? newest->step : 0, a.resume_step, chain_goes_on,
                            excluded_for(p.s, a.number), !gone.empty(),
                            !vanished && job.state == slurm::JobState::Failed && job.batch_host.empty() &&
                                decide::never_starts(job.reason)};
  auto v = decide::judge_ending(facts, p.s.restarts, p.c, p.wall());
  const auto finding = explained(p, a, v.cls);
  records::Ended ended;
  auto exclusions = blamed(p, a, job, v, ended, finding);
  if (!exclusions.empty() && !facts.new_exclusion) {  // judged again: a newly excluded node needs no backoff
    facts.new_exclusion = true;
    v = decide::judge_ending(facts, p.s.restarts, p.c, p.wall());
  }
  std::optional<intent::Quarantine> quarantine;
  if (finding && decide::stops(*finding))
    v.decision = decide::stop_decision(*finding);  // not the checkpoint's fault: nothing falls back
  else if (const auto f = fallback_due(p, a, v, facts.new_exclusion); f != decide::Fallback::None)
    quarantine = fall_back(p, a, f, facts, v);
  lifecycle_decision(p.s, a, v.cls, p.w.kill_switch_ours, v.decision);
  describe(ended, a, job, v.cls, {v.step, facts.checkpoint_step, v.progressed}, v.decision);
  ended.new_exclusion = facts.new_exclusion;
  ended.end_source = std::string(source);
  if (finding) note_finding(ended, *finding);
  step_times(p, a, ended);
  if (!gone.empty()) ended.reason += ": " + std::string(gone);
  follow_gpus(p, a, exclusions, finding);
  for (auto& e : exclusions) p.add(std::move(e));
  p.add(intent::End{std::move(ended), job.std_out});
  if (quarantine) p.add(std::move(*quarantine));
  if (v.cls == decide::EndClass::Completed) prune(p, {.resumed_from = a.resume_from});  // what keep leaves for good
  if (v.decision.action == decide::Action::Pause) return;
  if (v.decision.action != decide::Action::Resubmit) return finish(p, v.decision.exit_code, v.decision.reason, &a, true);
  warn_budget(p, a, v.cls);
  start_wait(p.m.resubmit, a.number, 0, v.decision.delay_seconds, p.mono());
}

namespace {

// What shows that a job the controller forgot ever started: mlsup saw it running, or it left files,
// heartbeats, the plugin's records, or a record in accounting.
std::vector<std::string> signs_it_started(const Pass& p, const AttemptState& a, const decide::Witnesses& seen) {
  std::vector<std::string> signs = p.w.started_signs;
  const bool mine = p.m.attempt == a.number;
  if (mine && (p.m.running_seen_at > 0 || p.m.heartbeat.running_since > 0)) signs.push_back("mlsup saw it running");
  if (mine && !p.m.heartbeat.files.empty()) signs.push_back("mlsup saw its heartbeat or output");
  if (p.w.ending && (!p.w.ending->records.exits.empty() || !p.w.ending->records.health.empty()))
    signs.push_back("the plugin's records of it");
  if (!seen.accounted.empty()) signs.push_back("accounting's record of it");
  return signs;
}

}  // namespace

// No source knows how a forgotten job ended: one that never started is submitted again; one that ran,
// once its processes are shown gone (its heartbeat silent for the timeout a hang would need); else
// the campaign stops for a person (end_unknown).
void unrecalled(Pass& p, const AttemptState& a, slurm::JobId id, const decide::Witnesses& seen) {
  const auto signs = signs_it_started(p, a, seen);
  const slurm::Job job{.job_id = id};
  focus(p.m, a.number);
  if (p.w.heartbeat) observe(p.m.heartbeat, *p.w.heartbeat, p.mono());
  const auto newest = p.w.checkpoints ? checkpoint::newest_complete(*p.w.checkpoints) : std::nullopt;
  const long long step = std::max(combined(p.m.heartbeat).step, newest ? newest->step : 0LL);
  if (p.c.target_steps > 0 && step >= p.c.target_steps) return end(p, a, job, true);  // the training reached its end
  if (signs.empty())
    return end(p, a, job, true, false, "", "nothing shows that it ever started (no output, heartbeat, plugin record, "
                                           "end record or accounting record): it is submitted again");
  if (!p.c.heartbeat.enabled) return end(p, a, job, true);  // its processes cannot be shown gone
  if (p.m.heartbeat.running_since <= 0) p.m.heartbeat.running_since = p.mono();
  const auto settings = settings_in_force(p.c.heartbeat, p.c.poll_interval, p.m.calibration);
  const std::string silent = hang_reason(p.m.heartbeat, settings, p.mono());
  if (!silent.empty())
    return end(p, a, job, true, false, "", "it ran (" + util::join(signs, "; ") + ") and its processes are gone: " +
                                               silent + "; it is submitted again from the newest complete checkpoint");
  if (p.m.forgotten_told == a.number) return;
  p.m.forgotten_told = a.number;
  p.report(events::ForgottenWaiting{
      a.number, id, signs,
      "Slurm forgot job " + std::to_string(id) + ", which ran (" + util::join(signs, "; ") +
          "): nothing is submitted until its heartbeat shows its processes gone"});
}

void forgotten(Pass& p, const AttemptState& a, slurm::JobId id) {
  if (a.cancel_reason) return end(p, a, slurm::Job{.job_id = id}, true);  // mlsup's own cancel: its reason is the class
  if (p.w.accounting && !*p.w.accounting) {
    p.report(events::AccountingUnavailable{a.number, id, p.w.accounting->error().message,
                                           "Slurm forgot the job: ask accounting again; nothing is decided"});
    return;
  }
  decide::Witnesses seen;
  if (p.w.accounting) seen.accounted = (*p.w.accounting)->jobs;
  if (p.w.ending)
    for (const auto& x : p.w.ending->records.exits)
      if (x.step == observe::kBatchStep) seen.batch_exit = decide::ExitSeen{x.exit_code, x.signal};
  if (p.w.end_record) seen.end_record = observe::parse_end_record(*p.w.end_record);
  const auto found = decide::recall_ending(id, seen);
  if (!found) return unrecalled(p, a, id, seen);
  const slurm::Job job{.job_id = id, .state = found->state, .exit_code = found->exit_code, .exit_signal = found->exit_signal};
  end(p, a, job, false, false, decide::source_name(found->source));
}

}  // namespace mlsup::engine::reconcile_parts

namespace mlsup::engine {

std::vector<intent::Exclude> blame_exclusions(const CampaignState& s, int attempt, decide::EndClass cls,
                                              std::vector<decide::NodeEvidence> evidence, const config::Config& c,
                                              double now, const std::optional<FirstWeighed>& first) {
  decide::BlameInput in{cls, std::move(evidence), s.failures, now,
                        static_cast<double>(c.policy.budgets.at("failed").window.count()), 2};
  in.first_evidence = first && first->verdict.apply && c.policy.exclusion_unexplained == "first";
  in.follows_training = first && first->verdict.follows_training;
  const auto until = [&](const decide::Blamed& b) {
    return now + static_cast<double>((b.first_evidence ? c.policy.exclusion_unexplained_ttl : c.policy.exclusion_ttl).count());
  };
  std::vector<intent::Exclude> out;
  for (auto& b : decide::blame(in)) {
    const double end = until(b);
    out.push_back({attempt, std::move(b), end, first ? first->end : decide::FirstEnd{}});
  }
  return out;
}

}  // namespace mlsup::engine
