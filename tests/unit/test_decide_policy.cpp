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

TEST_CASE("the wait after an ending, as a table: class, progress, new exclusion, endings before -> delay") {
  auto c = config();  // backoff 10 s initial, 35 s at most
  c.policy.budgets["failed"].count = 100;  // neither the budget nor the crash loop stops these rows
  c.policy.crash_loop_restarts = 100;
  const Restart fruitless{0, EndClass::Failed, false, false};
  const Restart progressed{0, EndClass::Failed, true, false};
  const Restart excluded{0, EndClass::Hang, false, true};
  const Restart hung{0, EndClass::Hang, false, false};
  const Restart timed_out{0, EndClass::Timeout, false, false};
  struct Row {
    const char* what;
    EndClass cls;
    bool progressed, new_exclusion;
    std::vector<Restart> before;
    double delay;
  };
  const Row rows[] = {
      {"a time limit goes on at once", EndClass::Timeout, false, false, {}, 0},
      {"a preemption goes on at once", EndClass::Preempted, false, false, {}, 0},
      {"a failure that saved a newer checkpoint goes on at once", EndClass::Failed, true, false, {}, 0},
      {"a failure whose node was excluded goes on at once", EndClass::Failed, false, true, {}, 0},
      {"a hang whose silent node was excluded goes on at once", EndClass::Hang, false, true, {}, 0},
      {"a node failure that made progress goes on at once", EndClass::NodeFail, true, false, {fruitless}, 0},
      {"a fruitless failure waits the initial backoff", EndClass::Failed, false, false, {}, 10},
      {"a fruitless failure after one that made progress waits the initial backoff", EndClass::Failed, false, false,
       {fruitless, progressed}, 10},
      {"a fruitless failure after one that excluded a node waits the initial backoff", EndClass::Failed, false, false,
       {fruitless, excluded}, 10},
      {"a fruitless failure after a time limit waits the initial backoff", EndClass::Failed, false, false,
       {fruitless, timed_out}, 10},
      {"the second fruitless ending in a row waits twice as long", EndClass::Failed, false, false, {fruitless}, 20},
      {"fruitless endings of other classes count in the row", EndClass::NodeFail, false, false, {hung}, 20},
      {"the third in a row would wait 40 s: capped at 35", EndClass::OutOfMemory, false, false, {hung, fruitless}, 35},
      {"progress in the row's middle starts it again", EndClass::Failed, false, false, {fruitless, progressed, hung}, 20},
  };
  for (const auto& r : rows) {
    CAPTURE(r.what);
    const auto d = decide(r.cls, r.progressed, r.before, c, 10, r.new_exclusion);
    CHECK(d.action == Action::Resubmit);
    CHECK(d.delay_seconds == r.delay);
  }
  CHECK(decide(EndClass::Failed, true, {}, c, 0).reason.find("resubmitted at once: the attempt saved a newer checkpoint") !=
        std::string::npos);
  CHECK(decide(EndClass::Failed, false, {}, c, 0, true).reason.find("a node was excluded for it") != std::string::npos);
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

TEST_CASE("a new exclusion skips the wait, not the crash-loop stop or the budget") {
  const auto c = config();
  const std::vector<Restart> stalled{{0, EndClass::Failed, false, true}, {1, EndClass::Hang, false, true}};
  const auto loop = decide(EndClass::Failed, false, stalled, c, 2, true);
  CHECK(loop.action == Action::Stop);
  CHECK(loop.reason.find("3 attempts in a row made no step progress") != std::string::npos);
  const std::vector<Restart> two{{100, EndClass::Failed, true, true}, {200, EndClass::Failed, true, true}};
  CHECK(decide(EndClass::Failed, true, two, c, 300, true).exit_code == kBudgetSpent);
}

TEST_CASE("a job Slurm refused to start: resubmitted after a growing delay, no budget spent, until refusals have lasted submit_retry_for") {
  auto c = config();  // failed: 2 per hour; crash loop after 3; backoff 10 s .. 35 s
  c.policy.submit_retry_for = Seconds(600);
  CHECK_FALSE(budget_use(EndClass::Refused, {}, c, 0));
  const auto first = decide(EndClass::Refused, false, {}, c, 1000);
  CHECK(first.action == Action::Resubmit);
  CHECK(first.delay_seconds == 10);
  CHECK(first.reason.find("no restart budget") != std::string::npos);
  const std::vector<Restart> two{{900, EndClass::Refused, false, false}, {950, EndClass::Refused, false, false}};
  const auto third = decide(EndClass::Refused, false, two, c, 1000);
  CHECK(third.action == Action::Resubmit);  // 3 in a row, 100 s: neither a crash loop nor past the limit
  CHECK(third.delay_seconds == 35);         // 40 s, capped
  const auto late = decide(EndClass::Refused, false, two, c, 900 + 600);
  CHECK(late.action == Action::Stop);
  CHECK(late.exit_code == kCannotGoOn);
  CHECK(late.reason.find("policy.submit_retry_for") != std::string::npos);
  // A failure before the refusals does not start their clock; the refusals do not make a crash loop.
  const std::vector<Restart> mixed{{0, EndClass::Failed, false, false}, {990, EndClass::Refused, false, false},
                                   {995, EndClass::Refused, false, false}};
  CHECK(decide(EndClass::Refused, false, mixed, c, 1000).action == Action::Resubmit);
  CHECK(decide(EndClass::Failed, false, mixed, c, 1000).action == Action::Resubmit);  // 2 stalled, not 4
}

TEST_CASE("compacting the restarts: those no decision can reach are counted by class, and every decision stays the same") {
  auto c = config();  // failed: 2 per hour; crash loop after 3
  const double week = restart_horizon(c);
  CHECK(week == 7 * 86400.0);
  c.policy.budgets["hang"] = {.count = 3, .window = Seconds(30 * 86400)};
  CHECK(restart_horizon(c) == 30 * 86400.0);  // the longest window
  c.policy.budgets["hang"] = {.count = 5, .window = Seconds(6 * 3600)};
  const double now = 100 * 86400.0;
  std::vector<Restart> history;
  for (int i = 0; i < 50; ++i) history.push_back({now - 40 * 86400.0 + i * 60, i % 2 ? EndClass::Preempted : EndClass::Hang, true});
  history.push_back({now - 20 * 86400.0, EndClass::Failed, true});   // the newest that progressed, but old
  history.push_back({now - 19 * 86400.0, EndClass::Refused, false}); // a refusal: never breaks a streak
  history.push_back({now - 1800, EndClass::Failed, false});          // a streak without progress, in the window
  history.push_back({now - 900, EndClass::Failed, false});
  const auto whole = history;
  std::vector<RestartCount> earlier;
  compact_restarts(history, earlier, now, week);
  REQUIRE(history.size() == 4);  // from the newest that progressed on
  CHECK(history.front().time == now - 20 * 86400.0);
  REQUIRE(earlier.size() == 2);
  CHECK(earlier[0].cls == EndClass::Hang);
  CHECK(earlier[0].count == 25);
  CHECK(earlier[1].cls == EndClass::Preempted);
  CHECK(earlier[1].count == 25);
  for (const auto cls : {EndClass::Failed, EndClass::Hang, EndClass::Preempted, EndClass::Refused, EndClass::NodeFail})
    for (const bool progressed : {false, true}) {
      CAPTURE(class_name(cls));
      CAPTURE(progressed);
      const auto a = decide(cls, progressed, whole, c, now), b = decide(cls, progressed, history, c, now);
      CHECK(a.action == b.action);
      CHECK(a.exit_code == b.exit_code);
      CHECK(a.delay_seconds == b.delay_seconds);
      CHECK(a.reason == b.reason);
    }
  compact_restarts(history, earlier, now, week);  // again: nothing more to let go
  CHECK(history.size() == 4);

  // Without a restart that progressed, nothing is let go, however old (a streak may reach back to the first).
  std::vector<Restart> stalled = {{1, EndClass::Failed, false}, {2, EndClass::Failed, false}};
  std::vector<RestartCount> none;
  compact_restarts(stalled, none, now, week);
  CHECK(stalled.size() == 2);
  CHECK(none.empty());
}
