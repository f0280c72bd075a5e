// A failed sbatch: journaled as a fact, so that `run` and every `tick` decide alike from the journal
// (decide/submit_retry.h) whether to try again later or to stop.
#include "decide/submit_retry.h"
#include "campaign/actor.h"

namespace mlsup::engine {

util::Result<void> Actor::submit_failed(const AttemptState& a, const slurm::Error& e) {
  const std::string kind(slurm::error_kind_name(e.kind));
  const bool unknown = decide::outcome_unknown(e.kind);
  if (auto ok = record(records::SubmitFailed{a.number, e.kind, e.code, e.message, unknown ? "unknown" : "refused"}); !ok)
    return ok;
  const CampaignState& s = state();
  const auto retry = decide::submit_retry(s.current()->submit_failures, config_, edges_.now());
  const bool stop = retry.step == decide::SubmitStep::Stop;
  // The delay runs on the monotonic clock from now: a step of the wall clock neither skips nor stretches it.
  start_wait(memory_.sbatch_retry, a.number, static_cast<int>(s.current()->submit_failures.size()),
             retry.next_try - s.current()->submit_failures.back().time, mono());
  event(events::SubmitFailed{a.number, kind, e.message, e.transient(),
                             static_cast<int>(s.current()->submit_failures.size()), retry.alert,
                             unknown ? "unknown" : "refused",
                             stop      ? "stop"
                             : unknown ? "the job may exist: look for its tag until it has stayed absent for "
                                         "policy.submit_unknown_grace, then submit again"
                                       : "look for the job by its tag, then submit again",
                             retry.next_try, retry.reason});
  return {};  // on stop, the same pass looks the tag up (a job sbatch created though it failed is adopted), then ends
}

}  // namespace mlsup::engine
