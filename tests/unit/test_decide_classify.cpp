#include <doctest/doctest.h>

#include <algorithm>
#include <set>

#include "config/schema.h"
#include "decide/classes.h"
#include "decide/classify.h"

using namespace mlsup::decide;
using mlsup::slurm::JobState;
namespace decide = mlsup::decide;
namespace config = mlsup::config;

TEST_CASE("every Slurm ending has its class") {
  const std::pair<JobState, EndClass> table[] = {
      {JobState::Timeout, EndClass::Timeout},         {JobState::Preempted, EndClass::Preempted},
      {JobState::NodeFail, EndClass::NodeFail},       {JobState::OutOfMemory, EndClass::OutOfMemory},
      {JobState::BootFail, EndClass::BootFail},       {JobState::Deadline, EndClass::Deadline},
      {JobState::Cancelled, EndClass::CancelledByPerson}, {JobState::Failed, EndClass::Failed},
  };
  for (const auto& [state, cls] : table) {
    CAPTURE(state_name(state));
    CHECK(classify({.state = state, .exit_code = 1}) == cls);
  }
}

TEST_CASE("a clean exit completes the campaign, falls short of the target, or obeys the kill switch") {
  CHECK(classify({.state = JobState::Completed, .target_reached = true}) == EndClass::Completed);
  CHECK(classify({.state = JobState::Completed, .target_reached = false}) == EndClass::PlannedExit);
  CHECK(classify({.state = JobState::Completed, .kill_switch = true, .target_reached = false}) == EndClass::KillSwitch);
}

TEST_CASE("the do-not-retry exit code, and only as an exit code") {
  CHECK(classify({.state = JobState::Failed, .exit_code = 78}) == EndClass::NoRetry);
  CHECK(classify({.state = JobState::Failed, .exit_code = 42, .no_retry_exit_code = 42}) == EndClass::NoRetry);
  CHECK(classify({.state = JobState::Failed, .exit_code = 78, .exit_signal = 9}) == EndClass::Failed);
  CHECK(classify({.state = JobState::Failed, .exit_code = 1}) == EndClass::Failed);
}

TEST_CASE("what mlsup cancelled is classed by mlsup's reason, not as a person's cancel") {
  CHECK(classify({.state = JobState::Cancelled, .cancelled_by_mlsup = EndClass::Hang}) == EndClass::Hang);
  CHECK(classify({.state = JobState::Cancelled}) == EndClass::CancelledByPerson);
}

TEST_CASE("a job Slurm forgot, whose end no source knows") {
  CHECK(classify({.vanished = true}) == EndClass::EndUnknown);
  CHECK(classify({.target_reached = true, .vanished = true}) == EndClass::Completed);
  CHECK(classify({.kill_switch = true, .vanished = true}) == EndClass::KillSwitch);
}

TEST_CASE("a job Slurm ended without starting it is refused, never the training's failure") {
  CHECK(classify({.state = JobState::Failed, .exit_code = 1, .never_ran = true}) == EndClass::Refused);
  CHECK(classify({.state = JobState::Failed, .exit_code = 1}) == EndClass::Failed);
  CHECK(classify({.state = JobState::Cancelled, .never_ran = true}) == EndClass::CancelledByPerson);
  CHECK(classify({.state = JobState::Cancelled, .cancelled_by_mlsup = EndClass::Hang, .never_ran = true}) == EndClass::Hang);
  const auto& r = row(EndClass::Refused);
  CHECK(r.action == Action::Resubmit);
  CHECK(r.budget.empty());  // no restart budget: bounded by policy.submit_retry_for
  CHECK_FALSE(r.node_related);
  CHECK_FALSE(r.counts_for_blame);
}

TEST_CASE("class names both ways") {
  for (auto c : {EndClass::Completed, EndClass::NodeFail, EndClass::CancelledByPerson, EndClass::Lost,
                 EndClass::EndUnknown}) {
    CHECK(class_from_name(class_name(c)) == c);
  }
  CHECK_FALSE(class_from_name("nope").has_value());
}

TEST_CASE("the class table: every name reads back, every budget it names is a config budget and every config budget is drawn on") {
  std::set<std::string_view> drawn;
  for (const auto& r : decide::class_table()) {
    CAPTURE(r.name);
    CHECK(decide::class_from_name(r.name) == r.cls);
    CHECK(decide::class_name(r.cls) == r.name);
    CHECK((r.action == decide::Action::Resubmit) == (!r.budget.empty() || r.cls == decide::EndClass::Refused));
    if (r.budget.empty()) continue;
    drawn.insert(r.budget);
    const auto budgets = config::budget_classes();
    CHECK(std::find(budgets.begin(), budgets.end(), r.budget) != budgets.end());
  }
  for (const auto b : config::budget_classes()) {
    CAPTURE(b);
    CHECK(drawn.contains(b));
  }
  CHECK_FALSE(decide::class_from_name("nonsense"));
}
