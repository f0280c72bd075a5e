#include <doctest/doctest.h>

#include "slurm_model/srun_messages.h"

using namespace mlsup::slurm;

TEST_CASE("srun's task reports: the failed node, not the ones killed after it") {
  const char* out =
      "step 10\n"
      "srun: error: c1n2: task 1: Exited with exit code 3\n"
      "srun: launch/slurm: _step_signal: Terminating StepId=1.0\n"
      "slurmstepd-c1n1: error: *** STEP 1.0 ON c1n1 CANCELLED AT 2026-12-01T06:42:04 ***\n"
      "srun: error: c1n1: task 0: Terminated\n"
      "srun: error: c1n3: tasks 2-3: Killed\n"
      "srun: Force Terminated StepId=1.0\n";
  const auto reports = srun_task_reports(out);
  REQUIRE(reports.size() == 3);
  CHECK(reports[0].node == "c1n2");
  CHECK(reports[0].tasks == "1");
  CHECK(reports[0].exit_code == 3);
  CHECK(reports[0].failed);
  CHECK(reports[1].signal == "Terminated");
  CHECK_FALSE(reports[1].failed);
  CHECK(reports[2].tasks == "2-3");
  CHECK_FALSE(reports[2].failed);
  const auto first = first_task_end(reports);
  REQUIRE(first);
  CHECK(first->report.node == "c1n2");
  CHECK(first->victims == std::vector<std::string>{"c1n1", "c1n3"});
}

TEST_CASE("a fatal signal of its own is a failure; other srun errors are not reports") {
  const auto reports = srun_task_reports(
      "srun: error: gpu07: task 5: Segmentation fault (core dumped)\n"
      "srun: error: Unable to create step for job 12: Invalid generic resource specification\n"
      "srun: error: gpu08: task 6: Exited with exit code 0\n"
      "srun: error: gpu07: task 4: Aborted\n");
  REQUIRE(reports.size() == 3);
  CHECK(reports[0].signal == "Segmentation fault");
  CHECK(reports[0].failed);
  CHECK_FALSE(reports[1].failed);
  CHECK(reports[0].signo == 11);
  CHECK(reports[2].signo == 6);
  const auto first = first_task_end(reports);
  REQUIRE(first);
  CHECK(first->report.node == "gpu07");
  CHECK(first->victims.empty());  // gpu08's task exited 0; gpu07's abort is its own node's
  CHECK(srun_task_reports("").empty());
  CHECK_FALSE(first_task_end({}));
}

TEST_CASE("a task killed first is the first end; the tasks failing after it are its victims") {
  // One rank was SIGKILLed on n2; its peer on n1 then failed on its own (its collective lost a peer).
  const auto first = first_task_end(srun_task_reports(
      "srun: error: n2: task 1: Killed\n"
      "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.\n"
      "srun: error: n1: task 0: Exited with exit code 1\n"));
  REQUIRE(first);
  CHECK(first->report.node == "n2");
  CHECK(first->report.signo == 9);
  CHECK(first->victims == std::vector<std::string>{"n1"});
  CHECK_FALSE(first_task_end(srun_task_reports("srun: error: n1: task 0: Exited with exit code 0\n")));
}
