// An attempt's job ended (or Slurm forgot it): the ending judged whole, the nodes it blames, and
// what follows: the campaign's end, or the next attempt after a backoff. Pure (engine/reconcile.h).
#include <algorithm>

#include "decide/ending.h"
#include "engine/reconcile_pass.h"
#include "decide/recall.h"
#include "observe/end_record.h"
#include "observe/node_records.h"

namespace mlsup::engine::reconcile_parts {
using nlohmann::json;

namespace {

// How far an ended attempt got.
struct Reached {
  long long step = 0, checkpoint_step = 0;
  bool progressed = false;
};

// The `ended` record's fields: what ended, how it is classed, how far it got, what was decided and why.
json ended_fields(const AttemptState& a, const slurm::Job& job, decide::EndClass cls, const Reached& r,
                  const decide::Decision& d) {
  static const char* kActions[] = {"finish", "resubmit", "stop"};
  return {{"attempt", a.number},           {"job_id", job.job_id},
          {"class", std::string(decide::class_name(cls))},
          {"slurm_state", std::string(slurm::state_name(job.state))},
          {"exit_code", job.exit_code},    {"signal", job.exit_signal},
          {"nodes", job.nodes},            {"step", r.step},
          {"checkpoint_step", r.checkpoint_step}, {"resumed_from", a.resume_from},
          {"progressed", r.progressed},    {"action", kActions[static_cast<int>(d.action)]},
          {"delay", d.delay_seconds},      {"reason", d.reason}};
}

// What the ending says of each node of the job: Slurm's node states, srun's task reports and the
// SPANK plugin's records (the first failing task of the job's steps, the failed health checks).
std::vector<decide::NodeEvidence> node_evidence(Pass& p, const slurm::Job& job, json& fields) {
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
    p.report("node-records-problems", {{"job_id", job.job_id}, {"problems", out.records.problems},
                                       {"decision", "the readable records are used; the others are ignored"}});
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
    e.health_failed = std::find(sick.begin(), sick.end(), e.name) != sick.end();
  }
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

}  // namespace

void end(Pass& p, const AttemptState& a, const slurm::Job& job, bool vanished, bool chain_goes_on,
         std::string_view source) {
  if (p.w.heartbeat) observe(p.m.heartbeat, *p.w.heartbeat, p.mono());  // its last word
  const auto newest = p.w.checkpoints ? checkpoint::newest_complete(*p.w.checkpoints) : std::nullopt;
  const decide::EndingFacts facts{job.state, job.exit_code, job.exit_signal, vanished, a.cancel_reason, p.w.kill_switch,
                                  combined(p.m.heartbeat).step, newest ? newest->step : 0, a.resume_step, chain_goes_on};
  const auto v = decide::judge_ending(facts, p.s.restarts, p.c, p.wall());
  json fields = ended_fields(a, job, v.cls, {v.step, facts.checkpoint_step, v.progressed}, v.decision);
  if (!source.empty()) fields["end_source"] = std::string(source);
  // A hang was judged when it was cancelled; other endings about nodes are judged now.
  if (v.cls != decide::EndClass::Hang && decide::node_related(v.cls)) {
    const auto evidence = node_evidence(p, job, fields);
    fields["suspects"] = decide::suspects(evidence);
    for (auto& e : blame_exclusions(p.s, a.number, v.cls, evidence, p.c, p.wall())) p.add(std::move(e));
  }
  p.add(intent::End{std::move(fields), job.std_out});
  if (v.decision.action != decide::Action::Resubmit) return finish(p, v.decision.exit_code, v.decision.reason, &a, true);
  start_wait(p.m.resubmit, a.number, 0, v.decision.delay_seconds, p.mono());
}

void forgotten(Pass& p, const AttemptState& a, slurm::JobId id) {
  if (a.cancel_reason) return end(p, a, slurm::Job{.job_id = id}, true);  // mlsup's own cancel: its reason is the class
  if (p.w.accounting && !*p.w.accounting) {
    p.report("accounting-unavailable", {{"attempt", a.number}, {"job_id", id}, {"detail", p.w.accounting->error().message},
                                        {"decision", "Slurm forgot the job: ask accounting again; nothing is decided"}});
    return;
  }
  decide::Witnesses seen;
  if (p.w.accounting) seen.accounted = (*p.w.accounting)->jobs;
  if (p.w.ending)
    for (const auto& x : p.w.ending->records.exits)
      if (x.step == observe::kBatchStep) seen.batch_exit = decide::ExitSeen{x.exit_code, x.signal};
  if (p.w.end_record) seen.end_record = observe::parse_end_record(*p.w.end_record);
  const auto found = decide::recall_ending(id, seen);
  if (!found) return end(p, a, slurm::Job{.job_id = id}, true);
  const slurm::Job job{.job_id = id, .state = found->state, .exit_code = found->exit_code, .exit_signal = found->exit_signal};
  end(p, a, job, false, false, decide::source_name(found->source));
}

}  // namespace mlsup::engine::reconcile_parts

namespace mlsup::engine {

std::vector<intent::Exclude> blame_exclusions(const CampaignState& s, int attempt, decide::EndClass cls,
                                              std::vector<decide::NodeEvidence> evidence, const config::Config& c,
                                              double now) {
  const decide::BlameInput in{cls, std::move(evidence), s.failures, now,
                              static_cast<double>(c.policy.budgets.at("failed").window.count()), 2};
  const double until = now + static_cast<double>(c.policy.exclusion_ttl.count());
  std::vector<intent::Exclude> out;
  for (auto& b : decide::blame(in)) out.push_back({attempt, std::move(b), until});
  return out;
}

}  // namespace mlsup::engine
