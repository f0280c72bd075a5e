// The sources of a forgotten job's end, in order of trust, and what an exit seen from inside stands for.
#include <doctest/doctest.h>

#include <csignal>

#include "decide/recall.h"
#include "observe/end_record.h"

using namespace mlsup;
using decide::EndSource;
using decide::ExitSeen;
using slurm::JobState;

TEST_CASE("recall: accounting first, then the plugin's record, then the end record; none: nothing") {
  decide::Witnesses w;
  CHECK_FALSE(decide::recall_ending(7, w).has_value());
  w.end_record = ExitSeen{0, SIGTERM};
  CHECK(decide::recall_ending(7, w)->source == EndSource::EndRecord);
  CHECK(decide::recall_ending(7, w)->state == JobState::Timeout);
  w.batch_exit = ExitSeen{3, 0};
  CHECK(decide::recall_ending(7, w)->source == EndSource::PluginRecord);
  CHECK(decide::recall_ending(7, w)->state == JobState::Failed);
  w.accounted = {{.job_id = 8, .state = JobState::Completed}, {.job_id = 7, .state = JobState::Cancelled}};
  const auto r = decide::recall_ending(7, w);
  CHECK(r->source == EndSource::Accounting);
  CHECK(r->state == JobState::Cancelled);
  CHECK(decide::source_name(r->source) == "accounting");
}

TEST_CASE("recall: accounting's record of a job it still shows running or pending knows no end") {
  decide::Witnesses w;
  w.accounted = {{.job_id = 7, .state = JobState::Running}};
  CHECK_FALSE(decide::recall_ending(7, w).has_value());
  w.end_record = ExitSeen{0, 0};
  CHECK(decide::recall_ending(7, w)->source == EndSource::EndRecord);
}

TEST_CASE("an exit seen from inside: 0 completed, SIGTERM a time limit, anything else a failure") {
  CHECK(decide::state_of_exit({0, 0}) == JobState::Completed);
  CHECK(decide::state_of_exit({0, SIGTERM}) == JobState::Timeout);
  CHECK(decide::state_of_exit({0, SIGKILL}) == JobState::Failed);
  CHECK(decide::state_of_exit({13, 0}) == JobState::Failed);
}

TEST_CASE("end record: both keys as whole numbers, or no record") {
  const auto r = observe::parse_end_record("exit_code=13\nsignal=0\n");
  REQUIRE(r.has_value());
  CHECK(r->exit_code == 13);
  CHECK(r->signal == 0);
  CHECK(observe::parse_end_record("signal=15\nexit_code=0").value().signal == 15);
  CHECK_FALSE(observe::parse_end_record("").has_value());
  CHECK_FALSE(observe::parse_end_record("exit_code=1\n").has_value());            // torn
  CHECK_FALSE(observe::parse_end_record("exit_code=1\nsignal=x\n").has_value());
  CHECK_FALSE(observe::parse_end_record("exit_code=300\nsignal=0\n").has_value());
  CHECK_FALSE(observe::parse_end_record("exit_code=-1\nsignal=0\n").has_value());
  CHECK_FALSE(observe::parse_end_record("exit_code=1\nsignal=0\nother=2\n").has_value());
}
