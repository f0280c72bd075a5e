// sacct's parsable lines as the command-line backend reads them (JobIDRaw|JobID|State|ExitCode|Comment).
#include <doctest/doctest.h>

#include "slurm_model/sacct_text.h"

using namespace mlsup::slurm;

TEST_CASE("sacct: states, exit codes, signals, a person's cancel with its uid, comments with bars") {
  const auto jobs = parse_sacct(
      "1|1|FAILED|13:0|mlsup:x:abc:1\n"
      "2|2|CANCELLED by 1000|0:15|\n"
      "3|3|FAILED|0:9|\n"
      "5|4_1|COMPLETED|0:0|a|b\r\n"
      "7|7|TIMEOUT|0:1|\n");
  REQUIRE(jobs.size() == 5);
  CHECK(jobs[0].job_id == 1);
  CHECK(jobs[0].state == JobState::Failed);
  CHECK(jobs[0].exit_code == 13);
  CHECK(jobs[0].comment == "mlsup:x:abc:1");
  CHECK_FALSE(jobs[0].cancelled_by.has_value());
  CHECK(jobs[1].state == JobState::Cancelled);
  CHECK(jobs[1].cancelled_by == 1000u);
  CHECK(jobs[1].exit_signal == 15);
  CHECK(jobs[2].exit_signal == 9);
  CHECK(jobs[3].job_id == 5);
  CHECK(jobs[3].array_job_id == 4);
  CHECK(jobs[3].comment == "a|b");
  CHECK(jobs[4].state == JobState::Timeout);
}

TEST_CASE("sacct: a line that is not a job is skipped, never guessed") {
  CHECK(parse_sacct("").empty());
  CHECK(parse_sacct("\n\n").empty());
  CHECK(parse_sacct("x|x|FAILED|1:0|\n").empty());        // no id
  CHECK(parse_sacct("3|3|FAILED|1|\n").empty());          // no signal part
  CHECK(parse_sacct("3|3|FAILED|999:0|\n").empty());      // no such exit code
  CHECK(parse_sacct("3|3|FAILED\n").empty());             // fields missing
  const auto cancelled = parse_sacct("4|4|CANCELLED|0:0|\n");  // no "by": the canceller is not known
  REQUIRE(cancelled.size() == 1);
  CHECK_FALSE(cancelled[0].cancelled_by.has_value());
}

TEST_CASE("sacct: a site without accounting is told apart from a failure") {
  CHECK(accounting_disabled("sacct: error: Slurm accounting storage is disabled"));
  CHECK_FALSE(accounting_disabled("sacct: error: Problem talking to the database: Connection refused"));
}
