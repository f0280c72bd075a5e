#include "decide/ending.h"

#include <algorithm>

namespace mlsup::decide {

EndingVerdict judge_ending(const EndingFacts& f, const std::vector<Restart>& restarts, const config::Config& config,
                           double now) {
  EndingVerdict v;
  const bool vanished = f.vanished && !f.cancel_reason;  // a job mlsup cancelled may be forgotten: not lost
  v.step = std::max(f.checkpoint_step, f.heartbeat_step);
  // Without a target, a clean exit is the end; a job Slurm forgot needs evidence (a target reached).
  const bool target_reached = config.target_steps == 0 ? !vanished : v.step >= config.target_steps;
  v.cls = classify({f.state, f.exit_code, f.exit_signal, f.cancel_reason, f.kill_switch, target_reached,
                    config.policy.no_retry_exit_code, vanished, f.gone, f.never_ran});
  v.progressed = f.checkpoint_step > f.resume_step;
  v.decision = decide(v.cls, v.progressed, restarts, config, now, f.new_exclusion);
  if (f.chain_goes_on && v.decision.action == Action::Resubmit && v.decision.delay_seconds > 0) {
    v.decision.delay_seconds = 0;  // the chain's next task is queued already and waits for its values
    v.decision.reason += "; the chain's next task takes over without a backoff";
  }
  return v;
}

}  // namespace mlsup::decide
