// act on a hang: keep what evidence there is (the hang command's output, every rank's stacks, else a
// dump of each answering node's processes), probe
// the job's nodes, blame from the heartbeats that went silent first, the nodes that do not answer and
// the ranks the others' stacks wait on, then cancel.
// Before the timeout, the nodes the other ranks wait on are probed first: one proven silent makes
// it a hang at once; answered, nothing is done.
// The probe is read here, not in observe: it only means something at the moment of the hang.
#include <algorithm>
#include <filesystem>
#include <optional>

#include "decide/blame.h"
#include "decide/evidence_ending.h"
#include "decide/probe.h"
#include "edges/process.h"
#include "campaign/actor.h"
#include "reconcile/reconcile.h"
#include "journal/atomic_file.h"
#include "observe/output_tail.h"
#include "observe/rank_layout.h"
#include "util/strings.h"

namespace mlsup::engine {
namespace fs = std::filesystem;
using nlohmann::json;

void Actor::keep_hang_evidence(const AttemptState& a, const slurm::Job& job, const std::vector<std::string>& nodes) {
  if (config_.heartbeat.hang_command.empty()) return;
  edges::ProcessRequest r;
  r.argv = {"/bin/sh", "-c", config_.heartbeat.hang_command};
  r.env_add = {{"MLSUP_JOB_ID", std::to_string(job.job_id)}, {"MLSUP_NODES", util::join(nodes, ",")},
               {"MLSUP_ATTEMPT", std::to_string(a.number)}, {"MLSUP_STATE_DIR", config_.state_dir}};
  r.working_dir = config_.base_dir;
  r.timeout = config_.heartbeat.hang_command_timeout;
  if (!keep_lease(static_cast<double>(r.timeout.count()) + 5)) return;  // another supervisor holds the campaign now
  const auto done = edges::run_process(r);
  const std::string path = config_.dir().hang_evidence(a.number);
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  (void)journal::write_atomically(path, done.out + (done.err.empty() ? "" : "\n--- stderr ---\n" + done.err), 0644);
  event(events::HangEvidence{a.number, job.job_id, path, edges::outcome(done)});
}

namespace {

// The names of the nodes whose heartbeat went silent first.
std::vector<std::string> stale_nodes(const intent::Hang& i) {
  std::vector<std::string> names;
  for (const auto& st : i.stale) names.push_back(st.node);
  return names;
}

// A node of the job whose heartbeat did not go silent first: probed beside the suspects, it shows
// whether the probe itself works (a slow controller leaves every node unanswered).
std::optional<std::string> control_node(const intent::Hang& i) {
  const auto stale = stale_nodes(i);
  for (const auto& n : slurm::expand_hostlist(i.job.nodes))
    if (std::find(stale.begin(), stale.end(), n) == stale.end()) return n;
  return std::nullopt;
}

}  // namespace

// Slurm's own view of the nodes: those it marks not responding or down (none when it cannot be asked).
std::vector<std::string> Actor::slurm_silent_nodes() {
  std::vector<std::string> out;
  if (const auto nodes = edges_.slurm->nodes())
    for (const auto& n : *nodes)
      if (n.not_responding || n.state == "DOWN") out.push_back(n.name);
  return out;
}

// What a probe of nodes (and the control node, when given) proves silent, weighed (decide/probe.h); a
// doubt is told.
util::Result<std::vector<std::string>> Actor::proven_silent(const intent::Hang& i, const std::vector<std::string>& nodes,
                                                               const std::optional<std::string>& control) {
  auto asked = nodes;
  if (control) asked.push_back(*control);
  auto silent = probe_nodes(i.job, asked);
  if (!silent) return silent;
  if (silent->empty()) return silent;
  const auto verdict = decide::judge_probe({nodes, *silent, control, slurm_silent_nodes()});
  if (!verdict.doubt.empty())
    event(events::ProbeDoubted{i.attempt.number, i.job.job_id, *silent, verdict.silent, verdict.doubt});
  return verdict.silent;
}

std::optional<CancelEvidence> Actor::explain_hang(const AttemptState& a, const slurm::Job& job, const std::vector<std::string>& nodes,
                                                  std::vector<decide::NodeEvidence>& evidence) {
  const auto tail = observe::output_tail(job.std_out, job.std_err);
  if (tail.empty()) return std::nullopt;
  const auto rules = decide::all_rules(config_.evidence.rules);
  auto f = decide::match(rules, decide::split_lines(tail));
  if (!f) return std::nullopt;
  std::map<std::string, std::vector<std::string>> names;
  if (const auto known = edges_.slurm->nodes()) names = slurm::other_names(*known);
  const auto ranks = f->blame == decide::Blame::RankInLine ? observe::rank_layout(config_.dir().hang(a.number)) : std::vector<std::string>{};
  const auto named = decide::finding_nodes(*f, nodes, names, ranks);
  auto decided = decide::weigh_hang_output(evidence, *f, named);
  if (decide::stops(*f)) decided += std::string(decided.empty() ? "" : "; ") + "the campaign stops at the ending";
  event(events::HangExplained{a.number, job.job_id, f->rule, f->cls, static_cast<int>(f->line_number), f->line,
                              named.blame == decide::FindingBlame::OneNode ? named.node : "",
                              decided.empty() ? "the nodes are blamed as without it" : decided});
  return CancelEvidence{f->rule, f->cls, std::string(decide::rule_action_name(f->action)), f->line, static_cast<int>(f->line_number)};
}

util::Result<std::vector<std::string>> Actor::probe_nodes(const slurm::Job& job, const std::vector<std::string>& nodes) {
  if (auto leased = keep_lease(3.0 * static_cast<double>(config_.heartbeat.probe_timeout.count()) + 5); !leased) return std::unexpected(leased.error());
  return edges_.probe ? edges_.probe(job.job_id, nodes, config_.heartbeat.probe_timeout) : std::vector<std::string>{};
}

util::Result<void> Actor::act(const CampaignState& s, const intent::Hang& i) {
  if (!i.waited_on) return hang(s, i, i.reason, std::nullopt);
  auto silent = proven_silent(i, stale_nodes(i), control_node(i));  // only a node proven silent makes it a hang now
  if (!silent) return std::unexpected(silent.error());
  if (silent->empty()) {
    event(events::ProbeAnswered{i.attempt.number, i.job.job_id, stale_nodes(i),
                                i.reason + "; they answer a probe: the steady timeout decides"});
    return {};
  }
  const auto probe = config::format_duration(config_.heartbeat.probe_timeout);
  return hang(s, i, i.reason + "; " + util::join(*silent, ", ") + " did not answer a probe in " + probe, *silent);
}

util::Result<void> Actor::hang(const CampaignState& s, const intent::Hang& i, const std::string& reason,
                                  std::optional<std::vector<std::string>> silent) {
  const auto& a = i.attempt;
  const auto nodes = slurm::expand_hostlist(i.job.nodes);
  event(events::HangDetected{a.number, i.job.job_id, reason, silent ? stale_nodes(i) : nodes,
                             config::format_duration(config::Seconds(i.steady_timeout)), i.calibrated});
  keep_hang_evidence(a, i.job, nodes);
  const auto stacks = gather_stacks(a, i.job).value_or(decide::StacksVerdict{});  // none asked: no rank singled out
  if (!i.stale.empty()) {
    std::vector<events::StaleLead> named;
    for (const auto& st : i.stale) named.push_back({st.node, st.lead});
    event(events::HeartbeatStaleFirst{a.number, i.job.job_id, named, stale_margin(config_.heartbeat)});
  }
  if (!silent) {  // the other nodes' ranks, when they were waiting, showed life: only a timeout probes them all
    auto probed = proven_silent(i, nodes, std::nullopt);
    if (!probed) return std::unexpected(probed.error());
    silent = std::move(*probed);
  }
  dump_nodes(a, i.job, nodes, *silent);
  auto evidence = decide::hang_evidence(nodes, i.stale, *silent, stacks.nodes, stacks.why);
  const auto finding = explain_hang(a, i.job, nodes, evidence);
  for (const auto& e : blame_exclusions(s, a.number, decide::EndClass::Hang, evidence, config_, edges_.now()))
    if (auto ok = act(s, e); !ok) return ok;
  // Spare nodes: the job outlives the hung run, unless its batch host (where the job's loop runs) is silent.
  const bool host_silent = std::find(silent->begin(), silent->end(), i.job.batch_host) != silent->end();
  const bool in_job = config_.slurm.spare_nodes > 0 && !i.job.batch_host.empty() && !host_silent;
  intent::Cancel cancel{a, decide::EndClass::Hang, reason, in_job};
  cancel.evidence = finding;
  return act(s, cancel);
}

}  // namespace mlsup::engine
