// The lifecycle verbs inside reconcile: which request is taken next, and what a pause or a cancel
// asked for, or the campaign's window, calls for in each phase of the campaign (hold, release, ask the
// training to stop, cancel, end). Pure (reconcile/reconcile.h).
#include <algorithm>

#include "decide/exit_codes.h"
#include "decide/stop_wait.h"
#include "reconcile/reconcile_pass.h"

namespace mlsup::engine {
using namespace reconcile_parts;

std::optional<intent::TakeRequest> next_request(const CampaignState& s, const std::vector<Request>& requests) {
  const Request* oldest = nullptr;
  for (const auto& r : requests)
    if (!oldest || r.id < oldest->id) oldest = &r;
  if (!oldest) return std::nullopt;
  if (s.requests_done.contains(oldest->id)) return intent::TakeRequest{*oldest, std::nullopt, true};
  return intent::TakeRequest{*oldest, refuse(s, *oldest), false};
}

namespace reconcile_parts {
namespace {

constexpr const char* kCancelled = "cancelled with `mlsup cancel`";

// The attempt's job as this pass's query shows it, while it is still there; nullptr otherwise.
const slurm::Job* live_job(const Pass& p, const AttemptState& a) {
  if (!a.job_id || a.ended || a.cancel_reason || !p.w.jobs || !*p.w.jobs) return nullptr;
  const slurm::Job* job = watched_job(a, **p.w.jobs);
  return job && !slurm::is_final(job->state) ? job : nullptr;
}

// The grace after the kill switch: policy.stop_grace, or longer when the saves measured take longer.
double stop_grace(const Pass& p) {
  return decide::stop_grace(static_cast<double>(p.c.policy.stop_grace.count()), pace_figures(p.m.pace).save_p95);
}

// The training asked to stop through the switch is to be cancelled now: its grace is over, and its
// heartbeat does not say it is saving (or has said so for heartbeat.save_timeout).
bool stop_overdue(const Pass& p, const AttemptState& a) {
  const bool saving = p.m.attempt == a.number && p.m.pace.saving_since > 0;
  return decide::stop_overdue({a.switch_set_at, stop_grace(p), saving ? p.mono() - p.m.pace.saving_since : -1,
                               static_cast<double>(p.c.heartbeat.save_timeout.count())},
                              p.wall());
}

// Why the job is cancelled after the switch.
std::string not_exited(const Pass& p, const AttemptState& a) {
  return "the training did not exit within " + std::to_string(static_cast<long long>(p.wall() - a.switch_set_at)) +
         " s of the kill switch (grace " + std::to_string(static_cast<long long>(stop_grace(p))) + " s, and not saving)";
}

// `mlsup cancel`: no job, the end now; a queued job, cancelled at once; a running one, asked through
// the kill switch, and cancelled once it has outlived its grace (stop_overdue). Its ending ends the campaign.
bool cancelling(Pass& p, const AttemptState* a) {
  if (!a || a->ended || !a->job_id) {
    finish(p, decide::kCancelled, std::string("the campaign was ") + kCancelled, a, false);
    return true;
  }
  const slurm::Job* job = live_job(p, *a);
  if (!job) return false;  // an ending to follow (its decision becomes the cancel), or a cancel in flight
  p.add(intent::Status{*job});
  if (job->state == slurm::JobState::Pending) {
    p.add(intent::Cancel{*a, decide::EndClass::CancelRequested, "the campaign is " + std::string(kCancelled)});
    return true;
  }
  if (a->switch_set_at <= 0) {
    p.add(intent::AskToStop{*a, "cancel"});
    return false;
  }
  if (!stop_overdue(p, *a)) return false;
  p.add(intent::Cancel{*a, decide::EndClass::CancelRequested,
                       "the campaign is " + std::string(kCancelled) + " and " + not_exited(p, *a)});
  return true;
}

// The kill switch is a person's `mlsup stop`, not the one pause --now set for this attempt.
bool stop_asked(const Pass& p, const AttemptState* a) {
  return p.w.kill_switch && !(a && a->switch_set_at > 0 && p.w.kill_switch_ours);
}

// Chain mode: the queued tasks of the attempt's array (the ended attempt's, before the next one), as
// this pass's query shows them; nullptr when they are not known or none is left.
const slurm::Job* queued_tasks(const Pass& p, const AttemptState& a) {
  if (!a.chain || !a.job_id) return nullptr;
  const auto& answer = a.ended ? p.w.chain : p.w.jobs;
  return answer && *answer ? queued_remainder(**answer) : nullptr;
}

bool held_in_slurm(const slurm::Job& j) { return j.reason.starts_with("JobHeld"); }

// The chain's queued tasks were held by mlsup for a pause of one of the array's attempts.
bool chain_held(const CampaignState& s, slurm::JobId array) {
  return std::any_of(s.attempts.begin(), s.attempts.end(),
                     [&](const AttemptState& q) { return q.chain && q.job_id == array && q.held; });
}

// A pause (or the window's end) in chain mode holds the array's queued tasks, so that no task after the
// running one starts.
void hold_chain(Pass& p, const AttemptState* a, const char* why) {
  const slurm::Job* rest = a ? queued_tasks(p, *a) : nullptr;
  if (rest && !held_in_slurm(*rest) && !stop_asked(p, a)) p.add(intent::Hold{*a, rest->job_id, why});
}

// The pause is over: the chain's queued tasks that mlsup held are released.
void release_chain(Pass& p, const AttemptState* a) {
  const slurm::Job* rest = a ? queued_tasks(p, *a) : nullptr;
  if (rest && held_in_slurm(*rest) && chain_held(p.s, *a->job_id)) p.add(intent::Release{*a, rest->job_id});
}

// A queued job while a pause (or a closed window: why) holds the campaign: held once, unless a
// person's stop came meanwhile, which cancels it. True: the pass is decided.
bool hold_queued(Pass& p, const AttemptState& a, const slurm::Job& job, const char* why, const std::string& held_how) {
  p.add(intent::Status{job});
  if (stop_asked(p, &a))
    p.add(intent::Cancel{a, decide::EndClass::KillSwitch, "the kill switch was set while the job was held " + held_how});
  else if (!a.held) p.add(intent::Hold{a, job.job_id, why});
  return true;
}

// `mlsup pause`: nothing new starts; a queued job is held (in chain mode, the queued tasks); with --now
// a running one is asked to stop. A person's stop meanwhile still stops: a held job is cancelled, an
// idle campaign ends stopped (and its chain is cancelled).
bool pausing(Pass& p, const AttemptState* a) {
  hold_chain(p, a, "pause");
  if (a && !a->ended && a->chain && !a->task_job_id && p.w.jobs && *p.w.jobs && !task_running(**p.w.jobs))
    return true;  // the attempt waits for a task of the held chain: nothing to watch, nothing new
  if (!a || a->ended) {
    if (stop_asked(p, a)) finish(p, decide::kStoppedBySwitch, "the kill switch was set while the campaign was paused", a, false);
    return true;
  }
  const slurm::Job* job = live_job(p, *a);
  if (!job) return false;  // a decided submission goes out (and is held next pass), an ending is followed
  if (job->state == slurm::JobState::Pending) return hold_queued(p, *a, *job, "pause", "by a pause");
  if (job->state == slurm::JobState::Running && p.s.pause_now && a->switch_set_at <= 0)
    p.add(intent::AskToStop{*a, "pause"});
  return false;
}

bool window_closed(const Pass& p) { return p.w.window && !p.w.window->open; }

// The kill switch is the one mlsup set at the window's end for attempt a.
bool window_switch(const AttemptState* a) { return a && a->switch_set_at > 0 && a->switch_for == "window"; }

// The window's opening and closing, told once each (the first look tells only a closed window).
void tell_window(Pass& p) {
  if (!p.w.window) return;
  const bool open = p.w.window->open;
  const int now = open ? 1 : 2;
  if (p.m.window_told == now) return;
  const bool first = p.m.window_told == 0;
  p.m.window_told = now;
  if (first && open) return;
  const std::string end = p.c.window.at_end == "pause" ? "a running training is asked to save and exit"
                                                       : "a running job goes on to its end";
  if (open)
    return p.report(events::WindowOpened{
        {p.c.window.hours, p.w.window->changes_at,
         "the campaign's window opened: held jobs are released, the next attempt may start"}});
  p.report(events::WindowClosed{
      {p.c.window.hours, p.w.window->changes_at, "outside the campaign's window nothing starts: a queued job is held, " + end}});
}

// Outside the window: nothing new starts. A queued job is held (in chain mode, the queued tasks); a
// running training is asked to save and exit (at_end: pause), and its job cancelled as preempted once
// it outlives its grace (stop_overdue); with at_end: finish it goes on to its end. A person's stop still stops.
bool outside_window(Pass& p, const AttemptState* a) {
  hold_chain(p, a, "window");
  if (a && !a->ended && a->chain && !a->task_job_id && p.w.jobs && *p.w.jobs && !task_running(**p.w.jobs))
    return true;  // the attempt waits for a task of the held chain
  if (!a || a->ended) return !stop_asked(p, a);  // a person's stop is followed as usual
  const slurm::Job* job = live_job(p, *a);
  if (!job) return false;  // a decided submission goes out (and is held next pass), an ending is followed
  if (job->state == slurm::JobState::Pending) return hold_queued(p, *a, *job, "window", "outside its window");
  if (job->state != slurm::JobState::Running || p.c.window.at_end != "pause") return false;
  if (a->switch_set_at <= 0) p.add(intent::AskToStop{*a, "window"});
  if (!window_switch(a) || !stop_overdue(p, *a)) return false;  // watched as usual meanwhile
  p.add(intent::Status{*job});
  p.add(intent::Cancel{*a, decide::EndClass::Preempted, "the window closed and " + not_exited(p, *a)});
  return true;
}

}  // namespace

bool lifecycle(Pass& p, const AttemptState* a) {
  tell_window(p);
  if (p.s.cancel_requested) return cancelling(p, a);
  if (p.s.paused) return pausing(p, a);
  if (window_closed(p)) return outside_window(p, a);
  if (window_switch(a) && a->ended && p.w.kill_switch && p.w.kill_switch_ours) {  // the window is open again: its switch goes first
    p.add(intent::ClearSwitch{*a});
    return true;
  }
  release_chain(p, a);
  if (!a || !a->held || a->chain) return false;
  if (const slurm::Job* job = live_job(p, *a); job && job->state == slurm::JobState::Pending)
    p.add(intent::Release{*a, job->job_id});
  return false;
}

void lifecycle_decision(const CampaignState& s, const AttemptState& a, decide::EndClass cls, bool switch_ours,
                        decide::Decision& d) {
  const bool completed = d.action == decide::Action::Finish && d.exit_code == decide::kCompleted;
  if (s.cancel_requested && !completed) {
    d = {decide::Action::Stop, decide::kCancelled, 0, "the campaign was " + std::string(kCancelled) + " (" + d.reason + ")"};
    return;
  }
  const bool pause_switch = cls == decide::EndClass::KillSwitch && a.switch_set_at > 0 && switch_ours;  // not a person's stop
  if (s.paused && (d.action == decide::Action::Resubmit || pause_switch))
    d = {decide::Action::Pause, 0, 0, d.reason + "; the campaign is paused: `mlsup resume` carries it on"};
  else if (pause_switch && a.switch_for == "window")
    d = {decide::Action::Resubmit, 0, 0, "the window closed: the training saved and exited; the next window carries it on"};
}

}  // namespace reconcile_parts
}  // namespace mlsup::engine
