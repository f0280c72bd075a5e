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
  w.end_record = ExitSeen{0, SIGTERM};  // Slurm said nothing of the job as the SIGTERM came: no end known
  CHECK_FALSE(decide::recall_ending(7, w).has_value());
  w.end_record = ExitSeen{0, SIGTERM, JobState::Timeout};
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

TEST_CASE("an exit seen from inside: 0 completed, SIGTERM what Slurm said then, anything else a failure") {
  CHECK(decide::state_of_exit({0, 0}) == JobState::Completed);
  CHECK(decide::state_of_exit({0, SIGTERM}) == JobState::Unknown);
  CHECK(decide::state_of_exit({0, SIGTERM, JobState::Cancelled}) == JobState::Cancelled);
  CHECK(decide::state_of_exit({0, SIGTERM, JobState::Preempted}) == JobState::Preempted);
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

// Records as `scontrol -o show job` printed them in a job's SIGTERM trap on the local cluster (fields cut).
constexpr const char* kCancelled =
    "JobId=1 JobName=job3.sh JobState=COMPLETING Reason=None RunTime=00:00:09 TimeLimit=00:10:00 "
    "StartTime=2026-12-05T01:38:00 EndTime=2026-12-05T01:38:09 PreemptEligibleTime=2026-12-05T01:38:00 PreemptTime=None";
constexpr const char* kTimedOut =
    "JobId=2 JobName=job3.sh JobState=COMPLETING Reason=TimeLimit RunTime=00:01:00 TimeLimit=00:01:00 "
    "StartTime=2026-12-05T01:38:00 EndTime=2026-12-05T01:39:00 PreemptTime=None";
constexpr const char* kPreempted =
    "JobId=3 JobName=job3.sh JobState=COMPLETING Reason=None RunTime=00:00:30 TimeLimit=00:10:00 "
    "StartTime=2026-12-05T01:38:00 EndTime=2026-12-05T01:38:30 PreemptTime=2026-12-05T01:38:30";

TEST_CASE("ended by: a person's cancel, a time limit and a preemption told apart from Slurm's record at the SIGTERM") {
  CHECK(decide::ended_by(kCancelled) == JobState::Cancelled);  // well before its limit: not a time limit
  CHECK(decide::ended_by(kTimedOut) == JobState::Timeout);
  CHECK(decide::ended_by(kPreempted) == JobState::Preempted);
  CHECK(decide::ended_by("JobId=4 JobState=TIMEOUT StartTime=Unknown EndTime=Unknown") == JobState::Timeout);
  CHECK(decide::ended_by("JobId=5 JobState=COMPLETING TimeLimit=UNLIMITED StartTime=2026-12-05T01:38:00 "
                         "EndTime=2026-12-05T03:38:00 PreemptTime=None") == JobState::Cancelled);
  CHECK_FALSE(decide::ended_by("").has_value());
  CHECK_FALSE(decide::ended_by("JobId=6 JobState=COMPLETING StartTime=Unknown EndTime=Unknown").has_value());
}

TEST_CASE("end record: Slurm's record at the SIGTERM says how the job ended; an empty one says nothing") {
  const auto cancelled = observe::parse_end_record(std::string("exit_code=0\nsignal=15\nslurm=") + kCancelled + "\n");
  REQUIRE(cancelled.has_value());
  CHECK(cancelled->slurm_said == JobState::Cancelled);
  CHECK(decide::state_of_exit(*cancelled) == JobState::Cancelled);
  const auto unasked = observe::parse_end_record("exit_code=0\nsignal=15\nslurm=\n");
  REQUIRE(unasked.has_value());
  CHECK_FALSE(unasked->slurm_said.has_value());
  CHECK(decide::state_of_exit(*unasked) == JobState::Unknown);
}
