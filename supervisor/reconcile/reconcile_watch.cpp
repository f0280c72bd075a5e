// A submitted attempt's job as the query shows it: gone or ended (reconcile_ending.cpp), suspended,
// cancelled and still there, pending (wait, relax an exclusion, alert) or running (its heartbeat,
// judged on mlsup's clock; or its batch host lost, a node fault). Pure (reconcile/reconcile.h).
#include <algorithm>

#include <fmt/format.h>

#include "decide/pending.h"
#include "decide/capacity.h"
#include "decide/stragglers.h"
#include "reconcile/reconcile_pass.h"
#include "render/contract.h"
#include "util/strings.h"

namespace mlsup::engine::reconcile_parts {
using nlohmann::json;

namespace {

// A suspended job is not silent: when it runs again, its heartbeat's times (and the steps the rate is
// taken over) move by the time it was suspended.
void note_suspension(Pass& p, slurm::JobState state) {
  auto& m = p.m;
  const double now = p.mono();
  if (state == slurm::JobState::Suspended) {
    if (m.suspended_at <= 0) m.suspended_at = m.running_seen_at > 0 ? m.running_seen_at : now;
    return;
  }
  if (state != slurm::JobState::Running) return;
  if (m.suspended_at > 0) {
    shift(m.heartbeat, now - m.suspended_at);
    for (auto& s : m.steps) s.at += now - m.suspended_at;  // the step rate counts the time it ran
    p.report(events::SuspensionEnded{m.attempt, now - m.suspended_at,
                                     "the job was suspended; its heartbeat's silence counts from now on"});
    m.suspended_at = 0;
  }
  m.running_seen_at = now;
}

// Tells of each heartbeat file that was first read empty after it had content in this pass.
void report_empty_reads(Pass& p, const AttemptState& a, const HeartbeatSet& before) {
  for (const auto& [name, f] : p.m.heartbeat.files) {
    const auto was = before.files.find(name);
    if (f.empty_reads == 0 || (was != before.files.end() && was->second.empty_reads > 0)) continue;
    p.report(events::HeartbeatEmptyRead{
        a.number, name.empty() ? render::heartbeat_file(p.c, a.number) : name,
        "the heartbeat file was empty after it had content (a writer between truncating and writing it); "
        "the read is ignored: write the file atomically (a temporary file, then rename)"});
  }
}

// Now and then while the attempt runs: in chain mode the newest checkpoint into next.env, so that a task that
// starts while mlsup is away (its fallback) resumes from it rather than from an older one; and
// checkpoint.keep's surplus deleted (never what the attempt started from, what next.env names, a save in progress,
// the one before the newest: a fallback's).
void look_at_checkpoints(Pass& p, const AttemptState& a) {
  if (!p.w.checkpoints || !checkpoints_due(p.m, p.c, p.mono())) return;
  p.m.checkpoints_looked_at = p.mono();
  checkpoint::Needed needed{.resumed_from = a.resume_from};
  const auto newest = newest_usable(p);
  if (newest) needed.fallback_from = newest->path;  // the next attempt's resume point, and the one before it
  if (a.chain && newest) {
    p.add(intent::ChainValues{a, newest->path});
    needed.handed.push_back(newest->path);
  }
  prune(p, std::move(needed));
}

// The heartbeat's stale-first nodes as blame weighs them.
std::vector<decide::StaleNode> as_stale(const std::vector<StaleFirst>& nodes) {
  std::vector<decide::StaleNode> out;
  for (const auto& st : nodes) out.push_back({st.node, st.lead});
  return out;
}

bool calibrated(const Pass& p, const config::HeartbeatSettings& settings) { return is_calibrated(settings, p.c.heartbeat); }

// Before the timeout: the nodes the other ranks wait on, handed to act to be probed (one look per
// max(margin, 30 s)): a node proven silent makes it a hang at once.
void look_at_waited_on(Pass& p, const AttemptState& a, const slurm::Job& job, const config::HeartbeatSettings& settings) {
  const double now = p.mono();
  const double margin = stale_margin(settings);
  const auto suspects = waited_on(p.m.heartbeat, margin);
  if (suspects.empty() || (p.m.waited_on_probed_at > 0 && now < p.m.waited_on_probed_at + std::max(margin, 30.0))) return;
  p.m.waited_on_probed_at = now;
  std::vector<std::string> names;
  for (const auto& st : suspects) names.push_back(st.node);
  const std::string why = "the other ranks wait on " + util::join(names, ", ") + ", whose heartbeat stopped " +
                          std::to_string(static_cast<long long>(suspects.front().lead)) + " s before theirs";
  p.add(intent::Hang{a, job, why, static_cast<long long>(settings.steady_timeout.count()), calibrated(p, settings),
                     as_stale(suspects), true});
}

// Each rank's compute per step (the per-task heartbeat files' compute=) against the others': a rank
// slower for stragglers.for is told, once until it recovers (decide/stragglers.h).
void look_at_stragglers(Pass& p, const AttemptState& a, const slurm::Job& job) {
  std::map<std::string, decide::ComputeSeen> seen;
  for (const auto& [name, f] : p.m.heartbeat.files)
    if (!heartbeat_node(name).empty() && f.compute >= 0) seen[name] = {f.step, f.compute};
  if (seen.empty() && p.m.stragglers.empty()) return;
  const decide::StragglerSettings settings{p.c.stragglers.slower_by / 100.0, static_cast<double>(p.c.stragglers.for_time.count())};
  for (const auto& s : decide::follow_stragglers(p.m.stragglers, seen, p.mono(), settings)) {
    const std::string node = heartbeat_node(s.rank);
    p.report(events::StragglerFound{
        a.number, job.job_id, s.rank, node, s.compute, s.others, s.slower_for,
        fmt::format("rank {} on {} computes {:.3f} s per step, the other ranks {:.3f} s (their median): slower by more "
                    "than stragglers.slower_by ({}%) for {}",
                    s.rank, node, s.compute, s.others, p.c.stragglers.slower_by,
                    config::format_duration(config::Seconds(static_cast<long long>(s.slower_for))))});
  }
}

// A running job: its heartbeat files judged on mlsup's clock; a hang is handed to act.
void running(Pass& p, const AttemptState& a, const slurm::Job& job) {
  const double now = p.mono();
  auto& seen = p.m.heartbeat;
  if (seen.running_since <= 0) seen.running_since = now;
  const HeartbeatSet before = seen;
  if (p.w.heartbeat) observe(seen, *p.w.heartbeat, now);
  report_empty_reads(p, a, before);
  learn(p.m.calibration, combined(before), combined(seen));
  learn_pace(p.m.pace, combined(before), combined(seen));
  note_step_times(p, a, combined(before));
  note_step(p.m, combined(seen).step, now);
  look_at_stragglers(p, a, job);
  look_at_checkpoints(p, a);
  const auto settings = settings_in_force(p.c.heartbeat, p.c.poll_interval, p.m.calibration);
  const std::string hung = hang_reason(seen, settings, now);
  if (hung.empty()) return look_at_waited_on(p, a, job, settings);
  auto stale = as_stale(stale_first(seen, stale_margin(settings)));
  if (calibrated(p, settings) && stale.empty() && combined(seen).phase.empty()) doubt(p.m.calibration, a.number);
  p.add(intent::Hang{a, job, hung, static_cast<long long>(settings.steady_timeout.count()), calibrated(p, settings),
                     std::move(stale)});
}

// Slurm's reason for a pending job, told once per change (not every pass); "None" (not yet looked at) is not told.
void tell_pending_reason(Pass& p, const AttemptState& a, const slurm::Job& job) {
  if (job.reason == p.m.pending_reason || job.reason.empty() || job.reason == "None") return;
  p.m.pending_reason = job.reason;
  p.report(events::Pending{a.number, job.job_id, job.reason, "the job waits in Slurm's queue: " + job.reason});
}

// A --no-kill job whose batch host failed: Slurm took the node out and killed the batch script, and
// keeps the job RUNNING on the others with nothing to run in it. Nothing in the job can recover, so
// it ends as a node fault: the batch host excluded, the job cancelled, a new job submitted.
void batch_host_lost(Pass& p, const AttemptState& a, const slurm::Job& job) {
  const std::string reason = "the batch host " + job.batch_host + " of job " + std::to_string(job.job_id) +
                             " failed: Slurm removed it from the job, which runs on " + job.nodes +
                             " without its batch script (a --no-kill job)";
  p.add(intent::Exclude{a.number, decide::Blamed{job.batch_host, reason}, p.wall() + static_cast<double>(p.c.policy.exclusion_ttl.count()), {}});
  p.add(intent::Cancel{a, decide::EndClass::NodeFail, reason + "; it is cancelled and the next job excludes the node"});
}

// The relaxation of a's oldest exclusion from the pending job.
intent::Relax relax_oldest(const AttemptState& a, const slurm::Job& job) {
  const std::string node = a.exclude.back();
  std::vector<std::string> keep;
  for (const auto& n : slurm::expand_hostlist(job.excluded_nodes))
    if (n != node) keep.push_back(n);
  return intent::Relax{a, job, node, std::move(keep)};
}

// A pending job that asks for more nodes than its partition can give (down, drained, excluded): its
// spare nodes are dropped first, then mlsup's exclusions relaxed; what is still short is told (an
// alert, once per shortfall) and kept in memory for status and check. True when it decided the pass.
bool short_of_nodes(Pass& p, const AttemptState& a, const slurm::Job& job) {
  if (!p.w.nodes || !*p.w.nodes || !decide::may_want_nodes(job.reason)) return false;
  const auto excluded = slurm::expand_hostlist(job.excluded_nodes);
  const auto cap = decide::capacity(static_cast<int>(job.node_count), **p.w.nodes, job.partition, excluded);
  if (!decide::short_of(cap)) {
    if (!p.m.shortfall.empty())
      p.report(events::CapacityRestored{
          a.number, job.job_id, p.m.shortfall, "the nodes the job asks for are usable again: it waits for Slurm to start it"});
    p.m.shortfall.clear();
    return false;
  }
  const int spares = p.c.slurm.spare_nodes;
  const int training = static_cast<int>(job.node_count) - spares;
  if (spares > 0 && !a.spares_dropped && training > 0) {  // even when not enough: fewer nodes need to return
    p.add(intent::DropSpares{a, job, training, decide::shortfall_text(cap)});
    return true;
  }
  const bool mlsup_excludes = std::any_of(a.exclude.begin(), a.exclude.end(), [&](const std::string& n) {
    return std::find(excluded.begin(), excluded.end(), n) != excluded.end();
  });
  if (mlsup_excludes) {
    p.add(relax_oldest(a, job));
    return true;
  }
  const std::string text = decide::shortfall_text(cap);
  if (p.m.shortfall != text)
    p.report(events::CapacityShort{
        a.number, job.job_id, text, true,
        "job " + std::to_string(job.job_id) + " cannot start: it " + text + "; Slurm waits for nodes "
        "that come back only when a person resumes or replaces them (or lower the job's nodes); the "
        "campaign goes on by itself once enough are usable"});
  p.m.shortfall = text;
  return false;
}

}  // namespace

void pending(Pass& p, const AttemptState& a, const slurm::Job& job) {
  if (p.w.kill_switch)
    return p.add(intent::Cancel{a, decide::EndClass::KillSwitch, "the kill switch was set while the job was pending"});
  if (short_of_nodes(p, a, job)) return;
  auto& m = p.m;
  const double now = p.mono();
  const bool unavailable = decide::waiting_for_nodes(job.reason, !a.exclude.empty());
  if (!unavailable) m.unavailable_since = 0;
  else if (m.unavailable_since <= 0) m.unavailable_since = now;
  if (m.pending_since <= 0) m.pending_since = now;
  tell_pending_reason(p, a, job);
  const double waited = now - m.pending_since;
  const auto step = decide::judge_pending({job.reason, !a.exclude.empty(), unavailable ? now - m.unavailable_since : 0,
                                           waited, a.pending_alerted,
                                           static_cast<double>(p.c.policy.exclusion_relax_after.count()),
                                           static_cast<double>(p.c.policy.pending_alert_after.count())});
  if (step == decide::PendingStep::Relax) p.add(relax_oldest(a, job));
  const bool releasing = a.held && a.held_for == "submission";  // a release Slurm refuses ends the attempt instead
  if (step == decide::PendingStep::Alert && !releasing)
    p.add(intent::PendingAlert{a.number, job, waited, decide::never_starts(job.reason)});
}

void watch(Pass& p, const AttemptState& a, const std::vector<slurm::Job>& jobs) {
  if (a.chain && !a.task_job_id) return watch_chain(p, a, jobs);
  const slurm::JobId id = a.task_job_id.value_or(*a.job_id);
  const slurm::Job* job = watched_job(a, jobs);
  if (!job) return forgotten(p, a, id);
  p.add(intent::Status{*job});
  if (job->state == slurm::JobState::Running && !job->nodes.empty()) p.m.running_nodes = job->nodes;
  if (slurm::is_final(job->state)) return end(p, a, *job, false, a.chain && chain_goes_on(jobs, id));
  if (job->state != slurm::JobState::Pending && !p.m.shortfall.empty()) {  // it got its nodes
    p.report(events::CapacityRestored{a.number, job->job_id, p.m.shortfall,
                                      "the job got the nodes it waited for and started"});
    p.m.shortfall.clear();
  }
  if (p.c.slurm.spare_nodes > 0 && job->state == slurm::JobState::Running && !slurm::batch_host_lost(*job) &&
      watch_in_job(p, a, *job))
    return;
  note_suspension(p, job->state);
  if (a.cancel_reason) {
    if (p.m.cancel.sent == 0 || p.mono() >= p.m.cancel.next_at) p.add(intent::ResendCancel{a, *a.cancel_reason});
    return;
  }
  if (job->state == slurm::JobState::Pending) return pending(p, a, *job);
  if (slurm::batch_host_lost(*job)) return batch_host_lost(p, a, *job);
  if (job->state == slurm::JobState::Running) return running(p, a, *job);
}

}  // namespace mlsup::engine::reconcile_parts
