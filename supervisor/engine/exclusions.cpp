// Node faults after the fact: the evidence an ending leaves (Slurm's node states, srun's task
// reports, the plugin's records), the nodes it blames, and the exclusions each submission gets,
// capped, and relaxed in place for a job left waiting for missing nodes.
#include <algorithm>

#include "engine/campaign.h"
#include "observe/node_records.h"
#include "render/submission.h"
#include "slurm/srun_messages.h"
#include "util/files.h"
#include "util/strings.h"

namespace mlsup::engine {
using nlohmann::json;

util::Result<void> Campaign::relax_exclusion(const AttemptState& a, const slurm::Job& job) {
  const std::string node = a.exclude.back();  // the oldest
  std::vector<std::string> keep;
  for (const auto& n : slurm::expand_hostlist(job.excluded_nodes))
    if (n != node) keep.push_back(n);
  if (auto held = hold(kSlurmCallBound); !held) return held;
  if (auto done = edges_.slurm->set_excluded(job.job_id, util::join(keep, ",")); !done) {
    event("relax-failed", {{"attempt", a.number}, {"job_id", job.job_id}, {"node", node}, {"detail", done.error().message},
                           {"decision", "retry next pass"}});
    return {};
  }
  if (auto ok = record("relaxed", {{"attempt", a.number}, {"job_id", job.job_id}, {"node", node}}); !ok) return ok;
  memory_.unavailable_since = mono();  // the next one only after another full wait
  const auto now = edges_.slurm->jobs({job.job_id});  // read the change back
  event("exclusions-relaxed", {{"attempt", a.number}, {"job_id", job.job_id}, {"node", node},
                               {"exc_node_list", now && !now->empty() ? now->front().excluded_nodes : "?"},
                               {"reason", "pending for " + job.reason + " while mlsup excludes " + util::join(a.exclude, ",") +
                                              ": the oldest exclusion is dropped so that the job can run"}});
  return {};
}

std::vector<decide::NodeEvidence> Campaign::ending_evidence(const slurm::Job& job, json& context) {
  auto evidence = node_states(job.nodes);
  std::string output = util::read_end(job.std_err.empty() ? job.std_out : job.std_err, 64 * 1024);
  if (!job.std_err.empty() && job.std_err != job.std_out) output += util::read_end(job.std_out, 64 * 1024);
  const auto failed = slurm::failed_task_nodes(slurm::srun_task_reports(output));
  for (auto& e : evidence) e.task_failed = std::find(failed.begin(), failed.end(), e.name) != failed.end();
  // The SPANK plugin's records, when it is installed: the first failing task of the job's steps (the
  // batch script and the extern step fail as a consequence) and the failed health checks.
  const auto records = observe::read_node_records(config_.state_dir, job.job_id);
  if (!records.problems.empty())
    event("node-records-problems", {{"job_id", job.job_id}, {"problems", records.problems},
                                    {"decision", "the readable records are used; the others are ignored"}});
  std::vector<observe::TaskExit> step_exits;
  for (const auto& x : records.exits)
    if (x.step >= 0) step_exits.push_back(x);
  const auto first = observe::first_failure(step_exits);
  const auto sick = observe::failed_health(records.health);
  for (auto& e : evidence) {
    e.failed_first = first && first->node == e.name;
    e.health_failed = std::find(sick.begin(), sick.end(), e.name) != sick.end();
  }
  if (first)
    context["first_failure"] = {{"node", first->node}, {"step", first->step}, {"rank", first->rank},
                                {"exit_code", first->exit_code}, {"signal", first->signal}};
  if (!sick.empty()) context["health_failed"] = sick;
  return evidence;
}

std::vector<decide::NodeEvidence> Campaign::node_states(const std::string& hostlist) {
  std::vector<decide::NodeEvidence> evidence;
  const auto all = edges_.slurm->nodes();
  for (const auto& name : slurm::expand_hostlist(hostlist)) {
    decide::NodeEvidence e{name};
    if (all) {
      for (const auto& n : *all)
        if (n.name == name) e = {name, n.kept_off(), n.not_responding};
    }
    evidence.push_back(e);
  }
  return evidence;
}

util::Result<void> Campaign::exclude_blamed(const CampaignState& s, const AttemptState& a, decide::EndClass cls,
                                            const std::vector<decide::NodeEvidence>& evidence) {
  const double now = edges_.now();
  const decide::BlameInput in{cls, evidence, s.failures, now,
                              static_cast<double>(config_.policy.budgets.at("failed").window.count()), 2};
  for (const auto& b : decide::blame(in)) {
    const double until = now + static_cast<double>(config_.policy.exclusion_ttl.count());
    if (auto ok = record("exclude", {{"attempt", a.number}, {"node", b.node}, {"reason", b.reason}, {"until", until}}); !ok)
      return ok;
    event("excluded", {{"attempt", a.number}, {"node", b.node}, {"reason", b.reason},
                       {"for", config::format_duration(config_.policy.exclusion_ttl)}});
  }
  return {};
}

std::vector<std::string> Campaign::exclusions_for(const CampaignState& s, int number) {
  const std::size_t live = decide::excluded_nodes(s.ledger, edges_.now(), -1).size();
  if (live == 0) return {};
  // The cap depends on the job's size, which the rendered script knows.
  const auto shape = render::plan_submission(config_, template_.value_or(""), {number});
  const int job_nodes = shape ? shape->nodes : 1;
  int usable = 0;
  if (const auto all = edges_.slurm->nodes()) {
    for (const auto& n : *all)
      if (!n.kept_off()) ++usable;
  }
  const int cap = decide::exclusion_cap(config_.policy.exclusion_cap, usable, job_nodes);
  auto nodes = decide::excluded_nodes(s.ledger, edges_.now(), cap);
  if (nodes.size() < live)
    event("exclusions-relaxed", {{"kept", nodes}, {"cap", cap},
                                 {"reason", "excluding every blamed node would leave too few for the job"}});
  return nodes;
}

}  // namespace mlsup::engine
