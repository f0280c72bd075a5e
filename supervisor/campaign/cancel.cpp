// Giving up on an attempt: fence it, journal the intent, and send the cancel until the job is gone.
// A cancel that fails (or that the job outlives) is sent again on later passes with a growing delay;
// people are told when it keeps failing, since a job that is never cancelled holds its nodes until
// its time limit.
#include <algorithm>
#include <cmath>
#include <filesystem>

#include "campaign/actor.h"
#include "journal/atomic_file.h"

namespace mlsup::engine {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr double kFirstRetry = 2;     // seconds before the first resend; doubles with each send
constexpr double kLongestRetry = 60;  // the delay stops growing here
constexpr int kAlertAfterFailures = 3;
constexpr double kAlertAfterSeconds = 120;  // a job that outlives its cancel this long

// The delay before the next send, after sent sends.
double resend_delay(int sent) { return std::min(kLongestRetry, kFirstRetry * std::pow(2.0, sent - 1)); }

}  // namespace

util::Result<void> Actor::act(const CampaignState&, const intent::Cancel& i) {
  const auto& a = i.attempt;
  if (a.cancel_reason) return {};
  const slurm::JobId id = a.task_job_id.value_or(*a.job_id);  // in a chain, the task only
  std::error_code ec;
  fs::create_directories(config_.dir().fenced(), ec);
  if (auto ok = journal::write_atomically(config_.dir().fence(a.number), i.reason + "\n"); !ok)
    return ok;
  records::CancelIntent r{a.number, id, i.why, i.reason, i.steps_only};
  if (const auto& e = i.evidence) {
    r.evidence_rule = e->rule;
    r.evidence_class = e->cls;
    r.evidence_action = e->action;
    r.evidence_quote = e->quote;
    r.evidence_line = e->line;
  }
  auto ok = fact(r, events::Cancelling{});
  if (!ok) return ok;
  if (i.steps_only) {  // spare nodes: the attempt's run is killed; the job runs on for the next attempt
    if (auto leased = keep_lease(kSlurmCallBound); !leased) return leased;
    if (auto killed = edges_.slurm->kill_steps(id); !killed)
      event(events::StepsKillFailed{{a.number, id, killed.error().message, "the next attempt's hand-over kills them again"}});
    return {};
  }
  memory_.cancel = {};
  send_cancel(a, i.why);
  return {};
}

util::Result<void> Actor::act(const CampaignState&, const intent::ResendCancel& i) {
  send_cancel(i.attempt, i.why);
  return {};
}

void Actor::send_cancel(const AttemptState& a, decide::EndClass why) {
  const slurm::JobId id = a.task_job_id.value_or(*a.job_id);
  auto& tries = memory_.cancel;
  const double now = mono();
  if (tries.sent == 0) tries.first_at = now;
  ++tries.sent;
  tries.next_at = now + resend_delay(tries.sent);
  if (!keep_lease(kSlurmCallBound)) return;  // another supervisor holds the campaign now
  // A hung job's tasks are killed at once: Slurm's grace would only keep its nodes from the replacement.
  if (why == decide::EndClass::Hang) (void)edges_.slurm->kill_steps(id);
  const auto done = edges_.slurm->cancel(id);
  const bool failed = !done && done.error().kind != slurm::ErrorKind::UnknownJob;
  if (failed) ++tries.failed;
  const bool lingering = tries.sent > 1 && now - tries.first_at >= kAlertAfterSeconds;
  if (!failed && !lingering) return;
  const bool alert = !tries.alerted && (tries.failed >= kAlertAfterFailures || lingering);
  tries.alerted = tries.alerted || alert;
  event(events::CancelFailed{
      a.number, id, tries.sent, tries.failed, failed ? done.error().message : "the job is still there after the cancel",
      "send it again in " + std::to_string(static_cast<int>(resend_delay(tries.sent))) + "s", alert});
}

}  // namespace mlsup::engine
