// An ending judged whole, as a table: what was seen in, class, step, progress and action out.
#include <doctest/doctest.h>

#include "config/schema.h"
#include "decide/ending.h"

using namespace mlsup::decide;
using mlsup::slurm::JobState;

namespace {

mlsup::config::Config config(long long target = 0) {
  auto c = mlsup::config::defaults();
  c.target_steps = target;
  c.policy.backoff_initial = mlsup::config::Seconds(10);
  return c;
}

}  // namespace

TEST_CASE("ending: class, step, progress and action from what was seen") {
  struct Row {
    const char* what;
    EndingFacts facts;
    long long target;
    EndClass cls;
    long long step;
    bool progressed;
    Action action;
    double delay;
  };
  const Row rows[] = {
      {"a clean exit without a target is the end", {.state = JobState::Completed, .heartbeat_step = 40}, 0,
       EndClass::Completed, 40, false, Action::Finish, 0},
      {"a clean exit short of the target is a planned exit", {.state = JobState::Completed, .heartbeat_step = 40,
       .checkpoint_step = 40, .resume_step = 20}, 100, EndClass::PlannedExit, 40, true, Action::Resubmit, 0},
      {"a failure after a new checkpoint progressed: no backoff", {.state = JobState::Failed, .exit_code = 1,
       .heartbeat_step = 57, .checkpoint_step = 50, .resume_step = 20}, 0, EndClass::Failed, 57, true, Action::Resubmit, 0},
      {"a failure whose node was excluded: no backoff", {.state = JobState::Failed, .exit_code = 1, .heartbeat_step = 57,
       .checkpoint_step = 20, .resume_step = 20, .new_exclusion = true}, 0, EndClass::Failed, 57, false,
       Action::Resubmit, 0},
      {"a failure without a new checkpoint did not", {.state = JobState::Failed, .exit_code = 1, .heartbeat_step = 57,
       .checkpoint_step = 20, .resume_step = 20}, 0, EndClass::Failed, 57, false, Action::Resubmit, 10},
      {"a job Slurm forgot, whose end no source knows, holds the campaign unless it reached its target",
       {.vanished = true, .heartbeat_step = 60}, 100, EndClass::EndUnknown, 60, false, Action::Stop, 0},
      {"a forgotten job that reached its target completed", {.vanished = true, .heartbeat_step = 100}, 100,
       EndClass::Completed, 100, false, Action::Finish, 0},
      {"a job mlsup cancelled for a hang is a hang, even once forgotten",
       {.vanished = true, .cancel_reason = EndClass::Hang}, 0, EndClass::Hang, 0, false, Action::Resubmit, 10},
      {"a chain's queued task takes over without a backoff",
       {.state = JobState::Failed, .exit_code = 1, .chain_goes_on = true}, 0, EndClass::Failed, 0, false,
       Action::Resubmit, 0},
      {"the kill switch stops", {.state = JobState::Completed, .kill_switch = true}, 0, EndClass::KillSwitch, 0, false,
       Action::Stop, 0},
  };
  for (const auto& r : rows) {
    CAPTURE(r.what);
    const auto v = judge_ending(r.facts, {}, config(r.target), 1000);
    CHECK(v.cls == r.cls);
    CHECK(v.step == r.step);
    CHECK(v.progressed == r.progressed);
    CHECK(v.decision.action == r.action);
    CHECK(v.decision.delay_seconds == r.delay);
  }
}
