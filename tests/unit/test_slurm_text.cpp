#include <doctest/doctest.h>

#include <algorithm>
#include <csignal>
#include <set>

#include <slurm/slurm_errno.h>

#include "slurm/probe.h"
#include "slurm/sbatch.h"
#include "slurm_model/scontrol_text.h"
#include "slurm_model/types.h"

using namespace mlsup::slurm;

TEST_CASE("hostlists expand, ranges, lists and zero padding included") {
  CHECK(expand_hostlist("n[1-3,5],m2") == std::vector<std::string>{"n1", "n2", "n3", "n5", "m2"});
  CHECK(expand_hostlist("gpu[008-010]") == std::vector<std::string>{"gpu008", "gpu009", "gpu010"});
  CHECK(expand_hostlist("a") == std::vector<std::string>{"a"});
  CHECK(expand_hostlist("").empty());
  CHECK(expand_hostlist("r[1-2]n[1-2]") == std::vector<std::string>{"r1n1", "r1n2", "r2n1", "r2n2"});
}

TEST_CASE("hostlists that would expand without end are cut short") {
  const auto huge = expand_hostlist("n[0-4294967295]");
  REQUIRE(huge.size() == 65536);
  CHECK(huge.front() == "n0");
  CHECK(huge.back() == "n65535");
  CHECK(expand_hostlist("a[0-4294967295],b1").size() == 65536);
  CHECK(expand_hostlist("x[0-4294967295]y[5-1]").empty());
  const auto deep = expand_hostlist("a[1-2]b[1]c[1]d[1]e[1]f[1]g[1]h[1]i[1-2]");
  REQUIRE(deep.size() == 2);
  CHECK(deep.front() == "a1b1c1d1e1f1g1h1i[1-2]");  // past eight bracket groups a name is kept as written
}

TEST_CASE("a hostlist of long names stops after 8 MiB of names made") {
  // Fuzzing found a 131-byte list of long, nested names that took 0.3 s (2.6 s under ASan) to expand.
  const std::string prefix(200, 'x');
  const auto names = expand_hostlist(prefix + "[10000-99999]");  // names of 205 characters, 206 bytes counted
  REQUIRE_FALSE(names.empty());
  CHECK(names.front() == prefix + "10000");
  CHECK(names.size() <= (8u << 20) / 206 + 1);
}

TEST_CASE("job state names both ways") {
  for (auto s : {JobState::Pending, JobState::Running, JobState::NodeFail, JobState::OutOfMemory, JobState::BootFail}) {
    CHECK(state_from_name(state_name(s)) == s);
  }
  CHECK(state_from_name("COMPLETING") == JobState::Unknown);
  CHECK(is_final(JobState::Completed));
  CHECK(is_final(JobState::NodeFail));
  CHECK_FALSE(is_final(JobState::Pending));
  CHECK_FALSE(is_final(JobState::Unknown));
}

TEST_CASE("controller trouble is transient, a wrong request is not, and neither is a job state") {
  CHECK(classify_errno(SLURMCTLD_COMMUNICATIONS_CONNECTION_ERROR) == ErrorKind::Unreachable);
  CHECK(classify_errno(SLURM_PROTOCOL_SOCKET_IMPL_TIMEOUT) == ErrorKind::Timeout);
  CHECK(classify_errno(ESLURM_INVALID_JOB_ID) == ErrorKind::UnknownJob);
  CHECK(classify_errno(ESLURM_ACCESS_DENIED) == ErrorKind::PermissionDenied);
  CHECK(classify_errno(ESLURM_INVALID_PARTITION_NAME) == ErrorKind::Rejected);
  CHECK(classify_errno(12345) == ErrorKind::Other);
  CHECK(Error{ErrorKind::Unreachable}.transient());
  CHECK(Error{ErrorKind::Timeout}.transient());
  CHECK(Error{ErrorKind::Busy}.transient());
  CHECK_FALSE(Error{ErrorKind::Rejected}.transient());
  CHECK_FALSE(Error{ErrorKind::UnknownJob}.transient());
  CHECK(classify_message("sbatch: error: Batch job submission failed: Invalid partition name specified") == ErrorKind::Rejected);
  CHECK(classify_message("sbatch: error: Batch job submission failed: Unable to contact slurm controller (connect failure)") ==
        ErrorKind::Unreachable);
  CHECK(classify_message("slurm_load_jobs error: Socket timed out on send/recv operation") == ErrorKind::Timeout);
  CHECK(classify_message("scancel: error: Invalid job id 99") == ErrorKind::UnknownJob);
}

TEST_CASE("a running job has lost its batch host when the host is no longer among its nodes") {
  Job j;
  j.state = JobState::Running;
  j.nodes = "n[2-3]";
  j.batch_host = "n1";
  CHECK(batch_host_lost(j));
  j.nodes = "n[1,3]";
  CHECK_FALSE(batch_host_lost(j));
  j.nodes = "n[2-3]";
  j.state = JobState::Failed;  // an ended job is judged by its ending
  CHECK_FALSE(batch_host_lost(j));
  j.state = JobState::Running;
  j.batch_host = "";
  CHECK_FALSE(batch_host_lost(j));
}

TEST_CASE("a kill refused because the step is ending already is no failure; other refusals are") {
  // scancel's words when a step it lists ends before the signal reaches it
  CHECK(already_over(Error{ErrorKind::Other, 0, "error: Kill job error on job step id 41.2: Job/step already completing or completed"}));
  CHECK(already_over(Error{ErrorKind::Other, ESLURM_ALREADY_DONE, "Job/step already completing or completed"}));
  CHECK_FALSE(already_over(Error{ErrorKind::PermissionDenied, ESLURM_ACCESS_DENIED, "Access/permission denied"}));
  CHECK_FALSE(already_over(Error{ErrorKind::Unreachable, 0, "Unable to contact slurm controller"}));
}

TEST_CASE("sbatch's answer: a job id, or a sorted error") {
  mlsup::edges::ProcessResult ok{.started = true, .exit_code = 0, .out = "4242\n"};
  CHECK(parse_sbatch_result(ok).value() == 4242u);
  ok.out = "77;cluster\n";
  CHECK(parse_sbatch_result(ok).value() == 77u);
  ok.out = "Submitted batch job 5\n";
  CHECK(parse_sbatch_result(ok).error().message.find("printed no job id") != std::string::npos);
  mlsup::edges::ProcessResult bad{.started = true, .exit_code = 1,
                                  .err = "sbatch: error: Batch job submission failed: Node count specification invalid\n"};
  CHECK(parse_sbatch_result(bad).error().kind == ErrorKind::Rejected);
  mlsup::edges::ProcessResult slow{.started = true, .timed_out = true};
  CHECK(parse_sbatch_result(slow).error().kind == ErrorKind::Timeout);
  mlsup::edges::ProcessResult missing{.started = false, .start_error = "No such file"};
  CHECK(parse_sbatch_result(missing).error().message.find("cannot run sbatch") != std::string::npos);
}

TEST_CASE("scontrol -o records become jobs and nodes") {
  const auto records = parse_records(
      "JobId=17 ArrayJobId=15 ArrayTaskId=2 JobName=demo UserId=root(0) JobState=FAILED Reason=NonZeroExitCode "
      "Comment=mlsup:demo:3 ExitCode=3:0 NodeList=n[1-2] ExcNodeList=n4 BatchHost=n1 NumNodes=2 TimeLimit=1-00:00:00 "
      "SubmitTime=2026-11-29T10:00:00 StartTime=2026-11-29T10:00:05 EndTime=Unknown StdOut=/logs/demo 17.out\n"
      "JobId=20 JobName=x UserId=alice(1001) JobState=PENDING Reason=ReqNodeNotAvail,_UnavailableNodes:n3 "
      "Comment=(null) ExitCode=0:9 TimeLimit=UNLIMITED\n");
  REQUIRE(records.size() == 2);
  const Job a = job_from_record(records[0]);
  CHECK(a.job_id == 17u);
  CHECK(a.array_job_id == 15u);
  CHECK(a.array_task_id == 2u);
  CHECK(a.state == JobState::Failed);
  CHECK(a.exit_code == 3);
  CHECK(a.comment == "mlsup:demo:3");
  CHECK(a.nodes == "n[1-2]");
  CHECK(a.excluded_nodes == "n4");
  CHECK(a.batch_host == "n1");
  CHECK(a.node_count == 2u);
  CHECK(a.user_id == 0u);
  CHECK(a.time_limit_minutes == 1440u);
  CHECK(a.start_time - a.submit_time == 5);
  CHECK(a.end_time == 0);
  CHECK(a.std_out == "/logs/demo 17.out");
  const Job b = job_from_record(records[1]);
  CHECK(b.user_id == 1001u);
  CHECK(b.comment == "");
  CHECK(b.batch_host == "");
  CHECK(b.exit_signal == 9);
  CHECK(b.reason == "ReqNodeNotAvail,_UnavailableNodes:n3");
  CHECK_FALSE(b.time_limit_minutes.has_value());
  const Node n = node_from_record(parse_records("NodeName=n3 Arch=x86_64 State=DOWN*+DRAIN Reason=Not responding [slurm@2026]")[0]);
  CHECK(n.name == "n3");
  CHECK(n.state == "DOWN");
  CHECK(n.drain);
  CHECK(n.not_responding);
  CHECK(n.reason == "Not responding [slurm@2026]");
  CHECK(n.address.empty());
  const Node m = node_from_record(parse_records(
      "NodeName=gpu-12 Arch=x86_64 CoresPerSocket=1 NodeAddr=10.1.4.12 NodeHostName=gpu-12.cluster Version=22.05.8 "
      "OS=Linux State=IDLE Partitions=batch")[0]);
  CHECK(m.address == "10.1.4.12");
  CHECK(m.hostname == "gpu-12.cluster");
}

TEST_CASE("scontrol -o records: a long value is read whole, and only a field name makes a field") {
  const std::string comment(1'000'000, 'x');
  const auto records = parse_records("JobId=5 Comment=" + comment + " 9x=1 a-b=2 =3 NumNodes=4\n");
  REQUIRE(records.size() == 1);
  CHECK(job_from_record(records[0]).comment.size() == comment.size() + std::string(" 9x=1 a-b=2 =3").size());
  CHECK(job_from_record(records[0]).node_count == 4u);
  CHECK(records[0].at("JobId") == "5");
  CHECK(parse_records("Gres/gpu:a100=2 Key=a=b\n")[0].at("Key") == "a=b");
  CHECK(parse_records("Gres/gpu:a100=2\n")[0].at("Gres/gpu:a100") == "2");
}

TEST_CASE("a probe step: the nodes whose task printed its name answered; one step for every node, whatever the width") {
  using mlsup::edges::ProcessResult;
  // As srun printed it on the local cluster with n3 frozen: the others' names at once, n3's launch failed.
  const ProcessResult frozen{.started = true, .timed_out = true, .out = "c1n4\nc1n1\nc1n2\n",
                             .err = "srun: error: Task launch for StepId=1.1 failed on node c1n3: Socket timed out on "
                                    "send/recv operation\n"};
  CHECK(probe_answers(frozen) == std::set<std::string>{"c1n1", "c1n2", "c1n4"});
  CHECK(probe_answers(ProcessResult{.started = true, .exit_code = 1,
                                    .err = "srun: error: Unable to create step for job 3: Job/step already completing or completed\n"})
            .empty());
  std::vector<std::string> wide;
  for (int i = 1; i <= 1000; ++i) wide.push_back("n" + std::to_string(i));
  const auto argv = probe_argv(42, wide);
  CHECK(std::count(argv.begin(), argv.end(), std::string("srun")) == 1);
  CHECK(std::find(argv.begin(), argv.end(), "-N1000") != argv.end());
  CHECK(std::find(argv.begin(), argv.end(), "--ntasks-per-node=1") != argv.end());
}
