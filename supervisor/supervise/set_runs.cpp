#include "supervise/set_runs.h"

#include "state/state.h"
#include "store/read_campaign.h"
#include "store/replay_snapshot.h"
#include "render/submission.h"
#include "util/files.h"

namespace mlsup::engine {

std::pair<RunPhase, int> journal_phase(const config::Config& c) {
  const auto s = store::replayed_state(c);  // the snapshot and what follows it: a long journal is not parsed whole
  if (s.finished_code) return {*s.finished_code == 0 ? RunPhase::Completed : RunPhase::Ended, *s.finished_code};
  if (s.attempts.empty() && s.campaign_id.empty()) return {RunPhase::NotStarted, 0};
  return {RunPhase::Active, 0};
}

int run_nodes(const config::Config& c) {
  if (const auto text = util::read_file(c.template_path))
    if (const auto plan = render::plan_submission(c, *text, render::Attempt{})) return plan->nodes;
  return c.slurm.nodes.value_or(1);
}

std::map<std::string, GateDecision> set_gates(const config::CampaignSet& set, const std::set<std::string>& opened) {
  std::vector<GateRun> runs;
  for (const auto& r : set.runs) {
    auto [phase, code] = journal_phase(r.config);
    if (phase == RunPhase::NotStarted && opened.contains(r.name)) phase = RunPhase::Active;
    runs.push_back({r.name, r.after, r.priority, run_nodes(r.config), phase, code});
  }
  const auto decisions = decide_starts(runs, set.max_running, set.max_nodes);
  std::map<std::string, GateDecision> out;
  for (std::size_t i = 0; i < runs.size(); ++i) out[runs[i].name] = decisions[i];
  return out;
}

std::optional<GateDecision> gate_of(const config::Config& c) {
  if (c.set_file.empty()) return std::nullopt;
  const auto set = config::load_set_file(c.set_file, {.template_file = false});
  if (!set) return std::nullopt;
  const auto gates = set_gates(*set);
  const auto it = gates.find(c.set_run);
  return it == gates.end() ? std::nullopt : std::optional(it->second);
}

}  // namespace mlsup::engine
