// Spare nodes: an attempt that a running job runs (the job's claim, the end of its run, a hang's
// killed run), and where the next attempt goes: into the same job on its survivors and a spare, or a
// new job when no spare is left or the job cannot go on. Pure (reconcile/reconcile.h).
#include <algorithm>

#include "reconcile/reconcile_pass.h"
#include "util/strings.h"

namespace mlsup::engine {
namespace {

bool has(const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); }

}  // namespace

std::optional<std::vector<std::string>> spare_step_nodes(const std::vector<std::string>& previous,
                                                         const std::vector<std::string>& job_nodes,
                                                         const std::vector<std::string>& bad, int needed) {
  const auto good = [&](const std::string& n) { return has(job_nodes, n) && !has(bad, n); };
  std::vector<std::string> out = previous;
  if (static_cast<int>(out.size()) != needed) out.clear();  // not known: the first good nodes, in the job's order
  std::vector<std::string> spares;
  for (const auto& n : job_nodes)
    if (good(n) && !has(out, n)) spares.push_back(n);
  if (out.empty()) out.assign(needed, "");
  auto next = spares.begin();
  for (auto& n : out) {  // each failed node's rank moves to a spare; the others stay where they are
    if (!n.empty() && good(n)) continue;
    if (next == spares.end()) return std::nullopt;
    n = *next++;
  }
  return out;
}

namespace reconcile_parts {
namespace {

// The job's record with the attempt's run as its ending: state and exit status, on the run's nodes.
slurm::Job run_ending(const slurm::Job& job, const std::vector<std::string>& nodes, slurm::JobState state, int status) {
  slurm::Job j = job;
  j.state = state;
  j.exit_code = status;
  j.exit_signal = 0;
  if (!nodes.empty()) j.nodes = util::join(nodes, ",");
  return j;
}

// Nodes a new run must not use: the exclusions, and the nodes Slurm keeps off or cannot reach.
std::vector<std::string> unusable(const Pass& p, const std::vector<std::string>& exclude) {
  std::vector<std::string> out = exclude;
  if (p.w.nodes && *p.w.nodes)
    for (const auto& n : **p.w.nodes)
      if (n.kept_off() || n.not_responding) out.push_back(n.name);
  return out;
}

}  // namespace

bool watch_in_job(Pass& p, const AttemptState& a, const slurm::Job& job) {
  const bool claimed = p.w.spare_claim && p.w.spare_claim->job_id == job.job_id;  // by this job
  if (claimed && !a.step_claimed) p.add(intent::StepClaimed{a.number, *p.w.spare_claim});
  const auto& nodes = claimed ? p.w.spare_claim->nodes : a.step_nodes;  // the run's
  const std::size_t before = p.out.size();
  if (a.steps_only) {
    end(p, a, run_ending(job, nodes, slurm::JobState::Cancelled, 0), false);
  } else if (p.w.spare_end && spare_run_failed(*p.w.spare_end, p.c)) {
    // Slurm took a node of the run out of the job (it failed, and killed the run with it): a node fault
    const auto now = slurm::expand_hostlist(job.nodes);
    const bool lost = std::any_of(nodes.begin(), nodes.end(), [&](const auto& n) { return !has(now, n); });
    end(p, a, run_ending(job, nodes, lost ? slurm::JobState::NodeFail : slurm::JobState::Failed, *p.w.spare_end), false);
  } else {
    if (a.in_job && !a.step_claimed && !p.w.spare_claim) p.add(intent::SpareValues{a});  // again, until it is taken
    return false;
  }
  for (auto i = before; i < p.out.size(); ++i)  // the campaign ends while the job runs on: it is cancelled
    if (auto* f = std::get_if<intent::Finish>(&p.out[i])) f->cancel_chain = {{a.number, job.job_id}};
  return true;
}

void place_in_job(Pass& p, const AttemptState& previous, const std::vector<slurm::Job>& jobs, intent::Submit& sub) {
  const auto it = std::find_if(jobs.begin(), jobs.end(), [&](const slurm::Job& j) { return j.job_id == *previous.job_id; });
  if (it == jobs.end() || it->state != slurm::JobState::Running) return;  // it ended: a new job
  const auto bad = unusable(p, sub.exclude);
  const int needed = p.c.slurm.nodes.value_or(p.w.template_nodes);
  std::optional<std::vector<std::string>> nodes;
  if (!slurm::batch_host_lost(*it) && !it->batch_host.empty() && !has(bad, it->batch_host))
    nodes = spare_step_nodes(previous.step_nodes, slurm::expand_hostlist(it->nodes), bad, needed);
  if (!nodes) {
    sub.stop_job = it->job_id;
    p.report(events::SparesUsedUp{sub.attempt, it->job_id, it->nodes, it->batch_host, bad,
                                  "the job has no spare node left for the failed one (or its batch host is "
                                  "lost): it ends, and a new job is submitted"});
    return;
  }
  sub.in_job = it->job_id;
  sub.step_nodes = std::move(*nodes);
  sub.tag = previous.tag;
}

}  // namespace reconcile_parts
}  // namespace mlsup::engine
