#include <doctest/doctest.h>

#include "decide/policy.h"
#include "config/schema.h"

using namespace mlsup::decide;
using mlsup::config::Seconds;

namespace {

mlsup::config::Config config() {
  auto c = mlsup::config::defaults();
  c.policy.budgets["failed"] = {.count = 2, .window = Seconds(3600)};
  c.policy.crash_loop_restarts = 3;
  c.policy.backoff_initial = Seconds(10);
  c.policy.backoff_max = Seconds(35);
  return c;
}

}  // namespace

TEST_CASE("endings that stop or finish the campaign, with their exit codes") {
  const auto c = config();
  const std::pair<EndClass, int> table[] = {
      {EndClass::Completed, kCompleted},         {EndClass::KillSwitch, kStoppedBySwitch},
      {EndClass::NoRetry, kNoRetry},             {EndClass::CancelledByPerson, kCancelledByPerson},
      {EndClass::Deadline, kCannotGoOn},
  };
  for (const auto& [cls, code] : table) {
    CAPTURE(class_name(cls));
    const auto d = decide(cls, true, {}, c, 0);
    CHECK(d.action == (cls == EndClass::Completed ? Action::Finish : Action::Stop));
    CHECK(d.exit_code == code);
    CHECK_FALSE(d.reason.empty());
  }
}

TEST_CASE("time limit and preemption are resubmitted at once; failures back off, doubling up to the cap") {
  const auto c = config();
  CHECK(decide(EndClass::Timeout, true, {}, c, 0).action == Action::Resubmit);
  CHECK(decide(EndClass::Timeout, true, {}, c, 0).delay_seconds == 0);
  CHECK(decide(EndClass::Preempted, true, {}, c, 0).delay_seconds == 0);
  CHECK(decide(EndClass::Failed, true, {}, c, 0).delay_seconds == 10);
  const std::vector<Restart> one{{.time = 0, .cls = EndClass::Hang, .progressed = true}};
  CHECK(decide(EndClass::NodeFail, true, one, c, 10).delay_seconds == 20);
  const std::vector<Restart> three{{0, EndClass::Hang, true}, {1, EndClass::NodeFail, true}, {2, EndClass::OutOfMemory, true}};
  CHECK(decide(EndClass::NodeFail, true, three, c, 10).delay_seconds == 35);
  const std::vector<Restart> after_timeout{{0, EndClass::Failed, true}, {1, EndClass::Timeout, true}};
  CHECK(decide(EndClass::Failed, true, after_timeout, c, 10).delay_seconds == 10);
}

TEST_CASE("a budget counts restarts of its own class within its window") {
  const auto c = config();
  const std::vector<Restart> two{{100, EndClass::Failed, true}, {200, EndClass::Failed, true}};
  const auto spent = decide(EndClass::Failed, true, two, c, 300);
  CHECK(spent.action == Action::Stop);
  CHECK(spent.exit_code == kBudgetSpent);
  CHECK(spent.reason.find("failed budget (2 per 1h) is spent") != std::string::npos);
  CHECK(decide(EndClass::Failed, true, two, c, 100 + 3600).action == Action::Resubmit);  // the first left the window
  CHECK(decide(EndClass::NodeFail, true, two, c, 300).action == Action::Resubmit);       // another budget
  CHECK(decide(EndClass::Lost, true, two, c, 300).action == Action::Stop);               // lost draws on failed
  const std::vector<Restart> many(50, Restart{0, EndClass::Timeout, true});
  CHECK(decide(EndClass::Timeout, true, many, c, 1).action == Action::Resubmit);          // unlimited
}

TEST_CASE("restarts without step progress stop the campaign as a crash loop") {
  const auto c = config();
  const std::vector<Restart> stalled{{0, EndClass::Timeout, false}, {1, EndClass::Preempted, false}};
  const auto d = decide(EndClass::Timeout, false, stalled, c, 2);
  CHECK(d.action == Action::Stop);
  CHECK(d.exit_code == kBudgetSpent);
  CHECK(d.reason.find("3 attempts in a row made no step progress") != std::string::npos);
  CHECK(decide(EndClass::Timeout, true, stalled, c, 2).action == Action::Resubmit);
  const std::vector<Restart> broken{{0, EndClass::Timeout, false}, {1, EndClass::Timeout, true}};
  CHECK(decide(EndClass::Timeout, false, broken, c, 2).action == Action::Resubmit);
}
