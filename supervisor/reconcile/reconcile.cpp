// The reconcile pass's top: which phase the campaign is in (nothing submitted, a submission without
// its job, a job to watch, an ending to follow up) and the submissions. Pure (reconcile/reconcile.h).
#include "reconcile/reconcile.h"

#include <algorithm>

#include "checkpoint/retention.h"
#include "decide/debug_retry.h"
#include "decide/disk.h"
#include "decide/runway.h"
#include "decide/exit_codes.h"
#include "decide/ledger.h"
#include "decide/quiet.h"
#include "decide/signal_lead.h"
#include "decide/submit_retry.h"
#include "reconcile/reconcile_pass.h"
#include "render/submission.h"
#include "util/strings.h"

namespace mlsup::engine {
using nlohmann::json;
using namespace reconcile_parts;

namespace reconcile_parts {

std::string tag(const Pass& p, int number) { return render::job_tag(p.c.name, p.campaign_id, number); }

bool submit_due(const CampaignState& s, Memory& m, const Clocks& now) {
  const AttemptState* a = s.current();
  return !a || waited(m.resubmit, a->number, 0, s.next_submit_at, now);
}

void note_step_times(Pass& p, const AttemptState& a, const HeartbeatSeen& before) {
  const auto hb = combined(p.m.heartbeat);
  if (hb.progress_at <= 0 || hb.progress_at <= before.progress_at || hb.step <= a.resume_step) return;
  const double written = p.w.heartbeat_written_at > 0 ? std::min(p.w.heartbeat_written_at, p.wall()) : p.wall();
  p.m.last_progress_wall = written;
  if (p.m.first_step_at > 0) return;
  p.m.first_step_at = hb.progress_at;
  // Steps past the resume point before the one seen first took about the pace measured so far each, but
  // not from before the job was first seen running (nor its submission): a pace learned across a hang or a
  // start-up is slower than the training's.
  const double step = pace_figures(p.m.pace).step_p50.value_or(0);
  const double earliest = std::min(written, std::max(a.intent_time, wall_of(p.m.heartbeat.running_since, p.w.now)));
  p.m.first_step_wall = std::max(earliest, written - step * static_cast<double>(std::max(0LL, hb.step - a.resume_step - 1)));
}

std::optional<checkpoint::Checkpoint> newest_usable(const Pass& p, long long below) {
  if (!p.w.checkpoints) return std::nullopt;
  const auto& all = p.w.checkpoints->checkpoints;
  const auto& out = p.s.quarantined;
  for (auto it = all.rbegin(); it != all.rend(); ++it)
    if (it->complete && (below < 0 || it->step < below) && std::find(out.begin(), out.end(), it->path) == out.end()) return *it;
  return std::nullopt;
}

void prune(Pass& p, checkpoint::Needed needed) {
  if (!p.w.checkpoints || p.c.checkpoint.keep <= 0) return;
  needed.named = p.s.resume_point;
  needed.proven = p.s.proven_checkpoint;
  for (const auto& c : p.w.checkpoints->checkpoints)  // next.env's lines are render::chain_values's
    if (p.w.handed.find("MLSUP_RESUME_FROM=" + util::shell_quote(c.path) + "\n") != std::string::npos)
      needed.handed.push_back(c.path);
  auto old = checkpoint::prunable(*p.w.checkpoints, p.c.checkpoint.keep, needed);
  if (!old.empty()) p.add(intent::Prune{std::move(old)});
}

void finish(Pass& p, int code, const std::string& reason, const AttemptState* a, bool ends_now) {
  intent::Finish f{code, reason, std::nullopt};
  if (a && a->chain && a->job_id && (a->ended || ends_now || !a->task_job_id)) f.cancel_chain = {{a->number, *a->job_id}};
  p.add(std::move(f));
}

namespace {

// The nodes the next attempt excludes: the live exclusions, capped so that the job can still run.
std::vector<std::string> exclusions_for(Pass& p) {
  const std::size_t live = decide::excluded_nodes(p.s.ledger, p.wall(), -1).size();
  if (live == 0) return {};
  int usable = 0;
  if (p.w.nodes && *p.w.nodes) {
    for (const auto& n : **p.w.nodes)
      if (!n.kept_off()) ++usable;
  }
  const int cap = decide::exclusion_cap(p.c.policy.exclusion_cap, usable, p.w.template_nodes + p.c.slurm.spare_nodes);
  auto nodes = decide::excluded_nodes(p.s.ledger, p.wall(), cap);
  if (nodes.size() < live)
    p.report(events::ExclusionsCapped{nodes, cap, "excluding every blamed node would leave too few for the job"});
  return nodes;
}

// After an sbatch whose outcome is unknown (it may have created the job): counts this look, which found
// nothing, and says whether the tag has now stayed absent in enough looks over the grace period.
bool absence_confirmed(Pass& p, const AttemptState& a) {
  if (a.submit_failures.empty() || !decide::outcome_unknown(a.submit_failures.back().kind)) return true;
  const int count = static_cast<int>(a.submit_failures.size());
  auto& seen = p.m.tag_absent;
  if (seen.attempt != a.number || seen.count != count) seen = {a.number, count, 0};
  ++seen.looks;
  const double grace = static_cast<double>(p.c.policy.submit_unknown_grace.count());
  return seen.looks >= decide::kAbsentLooks && p.wall() >= a.submit_failures.back().time + grace;
}

// A submission's intent without its job: adopt the job that carries its tag, or submit (again).
void recover(Pass& p, const AttemptState& a) {
  const auto& found = *p.w.by_tag;
  if (!found) {
    p.report(events::SlurmUnavailable{.attempt = a.number, .detail = found.error().message});
    return;
  }
  if (found->empty() && p.w.accounting && !*p.w.accounting) {
    p.report(events::AccountingUnavailable{.attempt = a.number, .detail = p.w.accounting->error().message,
                                           .decision = "the job may exist: ask accounting again before submitting"});
    return;
  }
  if (found->empty() && p.w.accounting && !(*p.w.accounting)->jobs.empty()) {
    const auto& job = (*p.w.accounting)->jobs.front();  // the job was created, and has ended already
    p.add(intent::Adopt{a.number, job.array_job_id ? job.array_job_id : job.job_id, job.array_job_id != 0});
    return;
  }
  if (found->empty()) {
    if (sbatch_in_flight(p, a)) return;  // its job is adopted when it appears
    if (!absence_confirmed(p, a)) return;  // neither a second job nor a stop while the first may still appear
    const auto retry = decide::submit_retry(a.submit_failures, p.c, p.wall());
    if (retry.step == decide::SubmitStep::Stop) return finish(p, decide::kCannotGoOn, retry.reason, &a, false);
    const int failures = static_cast<int>(a.submit_failures.size());
    if (failures > 0 && !waited(p.m.sbatch_retry, a.number, failures, retry.next_try, p.w.now)) return;
    if (p.w.template_text) p.add(intent::Send{a});
    return;
  }
  const auto& job = found->front();  // any other is a duplicate once this one is the journal's
  p.add(intent::Adopt{a.number, job.array_job_id ? job.array_job_id : job.job_id, job.array_job_id != 0,
                      job.state == slurm::JobState::Pending && job.reason.starts_with("JobHeld")});
}

// After an ending: the next attempt once its backoff is over, unless the kill switch says stop.
void follow_up(Pass& p, const AttemptState& a) {
  if (!p.s.awaiting_submit) return;
  if (p.w.kill_switch) return finish(p, decide::kStoppedBySwitch, "the kill switch was set: nothing more is submitted", &a, false);
  if (submit_due(p.s, p.m, p.w.now)) submit(p, a.number + 1);
}

// Slurm's job query has failed since the first failure of those in a row; once that is
// notify.unreachable_after, people are told (once, until it answers again).
void unanswered(Pass& p, const AttemptState& a, const slurm::Error& e) {
  if (p.m.slurm_failing_since == 0) p.m.slurm_failing_since = p.mono();
  const double failing = p.mono() - p.m.slurm_failing_since;
  if (p.m.slurm_alerted || failing < static_cast<double>(p.c.notify.unreachable_after.count())) return;
  p.m.slurm_alerted = true;
  const auto seconds = static_cast<long long>(failing);
  p.report(events::SlurmUnreachable{
      a.number, *a.job_id, std::string(slurm::error_kind_name(e.kind)), e.message, seconds,
      "Slurm has not answered the job query for " + std::to_string(seconds) + "s (" + e.message +
          "); the job's fate is unknown meanwhile: look at slurmctld"});
}

// A job submitted this recently is looked at every poll_interval even while it pends: on a cluster
// with free nodes it starts within seconds, and one that then fails at once is seen at once.
constexpr double kFreshSubmission = 30;

// The current attempt's job as the job query shows it, when the campaign only waits on it: not ended,
// paused or being cancelled, submitted, not a chain's; nullptr otherwise.
const slurm::Job* undisturbed_job(const CampaignState& s, const World& w) {
  const AttemptState* a = s.current();
  if (s.finished_code || s.paused || s.cancel_requested || !a || a->ended || !a->job_id || a->chain) return nullptr;
  if (!w.jobs || !*w.jobs) return nullptr;
  return watched_job(*a, **w.jobs);
}

// True when the pass decided nothing but the campaign's status.
bool only_status(const std::vector<Intent>& decided) {
  return std::all_of(decided.begin(), decided.end(), [](const Intent& i) { return std::holds_alternative<intent::Status>(i); });
}

// The pass saw the campaign's job (not a chain's) waiting in the queue since its submission at least
// kFreshSubmission ago, and decided nothing but its status: no pause or cancel under way.
bool only_queued(const CampaignState& s, const World& w, const std::vector<Intent>& decided) {
  const slurm::Job* job = undisturbed_job(s, w);
  if (!job || w.now.wall - s.current()->intent_time < kFreshSubmission) return false;
  return job->state == slurm::JobState::Pending && only_status(decided);
}

// Until when the campaign's next passes may go on Slurm's last answer (decide/quiet.h): its job runs,
// the pass decided nothing but its status, and the heartbeat progresses; 0 when Slurm is to be asked.
double quiet_until(const CampaignState& s, const World& w, const Memory& m, const config::Config& c,
                   const std::vector<Intent>& decided) {
  const slurm::Job* job = undisturbed_job(s, w);
  if (!job || m.attempt != s.current()->number) return 0;
  const auto hb = combined(m.heartbeat);
  const decide::QuietSigns signs{
      .job_running = job->state == slurm::JobState::Running,
      .only_status = only_status(decided),
      .heartbeat = c.heartbeat.enabled && heartbeat_written(m.heartbeat),
      .in_phase = !hb.phase.empty() || hb.waiting,
      .progress_at = hb.progress_at,
      .step = pace_figures(m.pace).step_p50,
      .job_end = job->time_limit_minutes ? static_cast<double>(job->end_time) : 0,
      .hang_after = static_cast<double>(settings_in_force(c.heartbeat, c.poll_interval, m.calibration).steady_timeout.count()),
      .poll = std::chrono::duration<double>(c.poll_interval).count(),
      .running_poll = std::chrono::duration<double>(c.running_poll_interval).count()};
  return decide::quiet_until(signs, w.now.mono, w.now.wall);
}

// The checkpoint file system's runway (decide/runway.h), when looked at: short of disk.runway_alert, or no room
// for the next save, is told once (disk-runway-short) until it is long enough again; the size measured is kept.
void watch_runway(Pass& p) {
  if (!p.w.runway) return;
  const auto& in = *p.w.runway;
  if (in.checkpoint && !p.w.runway_sized.empty())
    p.m.sized_path = p.w.runway_sized, p.m.sized_bytes = in.checkpoint->bytes, p.m.sized_files = in.checkpoint->files;
  const auto r = decide::runway(*p.w.disk, in);
  const bool short_now = decide::runway_short(r, static_cast<double>(p.c.disk.runway_alert.count()));
  if (short_now && !p.m.runway_told)
    p.report(events::DiskRunwayShort{
        p.w.disk->path, decide::runway_state_name(r.state), r.seconds, in.checkpoint ? in.checkpoint->bytes : 0, in.cadence,
        decide::runway_text(r, *p.w.disk, in) + ": make room, lower checkpoint.keep or save less often"});
  p.m.runway_told = short_now;
}

// The checkpoint folder's file system, when looked at: a rise to WARNING (80% used, bytes or inodes)
// or CRITICAL (95%) is told once (disk-nearly-full), and falling back below a level re-arms it.
void watch_disk(Pass& p) {
  if (!p.w.disk) return;
  const decide::Severity level = decide::disk_severity(*p.w.disk, decide::DiskLimits{});
  if (static_cast<int>(level) > p.m.disk_level)
    p.report(events::DiskNearlyFull{
        p.w.disk->path, std::string(severity_name(level)), p.w.disk->bytes_percent, p.w.disk->inodes_percent,
        disk_text(*p.w.disk) + ": checkpoints may soon fail to be written; make room or move checkpoint.dir"});
  p.m.disk_level = static_cast<int>(level);
  watch_runway(p);
}

// A submitted attempt: watch its job, once the query answered.
void watch_submitted(Pass& p, const AttemptState& a) {
  const auto& jobs = *p.w.jobs;
  if (!jobs) {
    if (jobs.error().message != p.m.slurm_error)
      p.report(events::SlurmUnavailable{a.number, *a.job_id, std::string(slurm::error_kind_name(jobs.error().kind)),
                                        jobs.error().message, "wait and ask again; nothing is decided"});
    p.m.slurm_error = jobs.error().message;
    p.m.duplicates_swept_at = 0;  // once it answers again (a restarted controller), its jobs are looked over at once
    unanswered(p, a, jobs.error());
    return;
  }
  p.m.slurm_error.clear();
  p.m.slurm_failing_since = 0;
  p.m.slurm_alerted = false;
  focus(p.m, a.number);
  watch(p, a, *jobs);
}

// slurm.signal_lead: auto: the lead sized from the pace measured so far; until a save was measured, the
// configured one, at most half of slurm.time. 0 (the config's) without auto.
long long sized_lead(const Pass& p) {
  if (!p.c.slurm.signal_lead.automatic) return 0;
  const auto pace = pace_figures(p.m.pace);
  const long long limit = p.c.slurm.time_limit ? p.c.slurm.time_limit->count() : 0;
  const long long configured = p.c.slurm.signal_lead.value.count();
  return decide::auto_lead(pace.save_p95, pace.step_p95, limit).value_or(limit > 0 ? std::min(configured, limit / 2) : configured);
}

// Why the next attempt runs with debug_on_retry.env, from the newest attempt that ended ("" = it does not).
std::string debug_for(const Pass& p) {
  const AttemptState* last = p.s.current();
  if (!last || !last->ended) return "";
  return decide::debug_reason({last->number, last->end_class, last->explained, last->progressed, !last->debug.empty()},
                              p.c.debug_on_retry.enabled);
}

}  // namespace

void submit(Pass& p, int number) {
  const auto* scan = p.w.checkpoints ? &*p.w.checkpoints : nullptr;
  const auto newest = newest_usable(p);
  if (scan && !scan->pointer_problem.empty()) p.report(events::CheckpointPointerIgnored{scan->pointer_problem});
  const bool named = !p.s.resume_point.empty();  // `mlsup resume --from`
  const std::string resume_from = named ? p.s.resume_point : newest ? newest->path : "";
  const long long resume_step = named ? p.s.resume_point_step : newest ? newest->step : 0;
  prune(p, {.resumed_from = resume_from, .fallback_from = resume_from});
  intent::Submit sub{number, tag(p, number), resume_from, resume_step, exclusions_for(p),
                     std::nullopt, std::nullopt, {}};
  sub.signal_lead = sized_lead(p);
  sub.debug = debug_for(p);
  // Chain mode: a task already queued runs this attempt; nothing is submitted.
  const AttemptState* previous = p.s.current();
  if (previous && previous->chain && previous->job_id && p.w.chain) {
    if (!*p.w.chain) {  // ask again next pass rather than start a second chain
      p.report(events::SlurmUnavailable{
          .attempt = number, .detail = p.w.chain->error().message, .decision = "ask again before submitting anything"});
      return;
    }
    sub.queued = next_task(**p.w.chain, previous->task_job_id.value_or(0));
  } else if (p.c.slurm.spare_nodes > 0 && previous && previous->job_id && p.w.chain) {
    if (!*p.w.chain) {  // ask again next pass rather than submit beside a job that may run it
      p.report(events::SlurmUnavailable{
          .attempt = number, .detail = p.w.chain->error().message, .decision = "ask again before submitting anything"});
      return;
    }
    place_in_job(p, *previous, **p.w.chain, sub);
    if (sub.in_job) return p.add(std::move(sub));
  }
  if (!sub.queued && !p.w.template_text) return;  // no template has rendered yet: told, looked at again next pass
  if (sub.queued) {
    sub.chain_job = *previous->job_id;
    sub.tag = previous->tag;
    sub.before = previous->exclude;
  }
  p.add(std::move(sub));
}

}  // namespace reconcile_parts

const slurm::Job* watched_job(const AttemptState& a, const std::vector<slurm::Job>& jobs) {
  const slurm::JobId id = a.task_job_id.value_or(a.job_id.value_or(0));
  // The tag, not the id, identifies: a controller that lost its state hands the ids out again.
  const std::string prefix = a.tag.substr(0, a.tag.rfind(':') + 1);
  const auto ours = [&](const slurm::Job& j) { return j.comment.empty() || prefix.empty() || j.comment.starts_with(prefix); };
  const auto it = std::find_if(jobs.begin(), jobs.end(),
                               [&](const slurm::Job& j) { return j.job_id == id && (!a.chain || j.array_task_id) && ours(j); });
  return it == jobs.end() ? nullptr : &*it;
}

bool due_at_once(const Progress& before, const CampaignState& after, Memory m, const config::Config& c,
                 const Clocks& now) {
  if (after.finished_code) return false;
  if (!before.awaiting_submit && after.awaiting_submit) return submit_due(after, m, now);
  const AttemptState* a = after.current();
  if (!a || a->ended || a->job_id || a->submit_failures.empty()) return false;
  if (before.attempt == a->number && before.submit_failures == a->submit_failures.size()) return false;
  return decide::submit_retry(a->submit_failures, c, now.wall).step == decide::SubmitStep::Stop;
}

std::optional<intent::Submit> next_submission(const CampaignState& s, const World& w, const config::Config& c) {
  const AttemptState* a = s.current();
  if (a && !a->ended && !a->job_id) {
    intent::Submit sub{a->number, a->tag, a->resume_from, a->resume_step, a->exclude, std::nullopt, std::nullopt, {}};
    sub.signal_lead = a->signal_lead;
    sub.debug = a->debug;
    return sub;
  }
  Memory m;
  Pass p{s, w, m, c, s.campaign_id, {}};
  submit(p, a ? a->number + 1 : 1);
  for (auto& i : p.out)
    if (auto* sub = std::get_if<intent::Submit>(&i)) return std::move(*sub);
  return std::nullopt;
}

Reconciled reconcile(const CampaignState& s, const World& w, Memory m, const config::Config& c,
                     const std::string& campaign_id) {
  Pass p{s, w, m, c, campaign_id, {}};
  const AttemptState* a = s.current();
  if (!s.finished_code) {
    watch_disk(p);
    cancel_duplicates(p);
  }
  if (s.finished_code) {
  } else if (lifecycle(p, a)) {
  } else if (!a) {
    if (w.kill_switch) finish(p, decide::kStoppedBySwitch, "the kill switch was set before the first attempt", nullptr, false);
    else submit(p, 1);
  } else if (a->ended) {
    follow_up(p, *a);
  } else if (!a->job_id) {
    if (w.by_tag) recover(p, *a);
  } else if (w.jobs) {
    watch_submitted(p, *a);
  }
  const bool queued = only_queued(s, w, p.out);
  const double quiet = quiet_until(s, w, m, c, p.out);
  return {std::move(m), std::move(p.out), queued, quiet};
}

}  // namespace mlsup::engine
