#include <doctest/doctest.h>

#include <csignal>

#include "observe/node_records.h"
#include "support.h"

using namespace mlsup::observe;

namespace {

TaskExit exit_of(const char* node, int rank, int code, int sig, double time) { return {node, 0, rank, code, sig, time}; }

}  // namespace

TEST_CASE("node records: both kinds, the node from the record") {
  const auto r = parse_node_records(
      "{\"v\":1,\"kind\":\"health\",\"job\":5,\"step\":0,\"node\":\"n1\",\"ok\":false,\"exit_code\":1,"
      "\"detail\":\"Xid 79\",\"time\":10.5}\n"
      "{\"v\":1,\"kind\":\"task-exit\",\"job\":5,\"step\":-1,\"node\":\"n1\",\"rank\":0,\"local_rank\":0,"
      "\"exit_code\":79,\"signal\":0,\"time\":10.75}\n",
      "file-node");
  CHECK(r.problems.empty());
  REQUIRE(r.health.size() == 1);
  CHECK(r.health[0].node == "n1");
  CHECK_FALSE(r.health[0].ok);
  CHECK(r.health[0].detail == "Xid 79");
  REQUIRE(r.exits.size() == 1);
  CHECK(r.exits[0].step == kBatchStep);
  CHECK(r.exits[0].exit_code == kHealthExitCode);
  CHECK(r.exits[0].time == doctest::Approx(10.75));
}

TEST_CASE("node records: a node record's addresses and GPUs; the latest per node; a GPU without a UUID left out") {
  const auto r = combine_node_records(
      {{"n1",
        "{\"v\":1,\"kind\":\"node\",\"job\":5,\"step\":-1,\"node\":\"n1\",\"addresses\":[\"10.0.0.1\",\"fd00::1\"],"
        "\"gpus\":[{\"uuid\":\"GPU-aaaa\",\"bus\":\"0000:07:00.0\",\"model\":\"NVIDIA H100 80GB HBM3\"},{\"bus\":\"0000:0a:00.0\"}],"
        "\"time\":10.0}\n"
        "{\"v\":1,\"kind\":\"node\",\"job\":5,\"step\":0,\"node\":\"n1\",\"addresses\":[\"10.0.0.1\"],"
        "\"gpus\":[{\"uuid\":\"GPU-aaaa\",\"bus\":\"0000:07:00.0\",\"model\":\"NVIDIA H100 80GB HBM3\"}],\"time\":12.0}\n",
        ""},
       {"n2", "{\"v\":1,\"kind\":\"node\",\"job\":5,\"step\":0,\"addresses\":[],\"gpus\":[],\"time\":11.0}\n", ""}});
  CHECK(r.problems.empty());
  REQUIRE(r.facts.size() == 3);
  CHECK(r.facts[0].addresses == std::vector<std::string>{"10.0.0.1", "fd00::1"});
  REQUIRE(r.facts[0].gpus.size() == 1);
  CHECK(r.facts[0].gpus[0] == mlsup::slurm::Gpu{"GPU-aaaa", "0000:07:00.0", "NVIDIA H100 80GB HBM3"});
  const auto latest = latest_facts(r.facts);
  REQUIRE(latest.size() == 2);
  CHECK(latest.at("n1").step == 0);
  CHECK(latest.at("n1").addresses == std::vector<std::string>{"10.0.0.1"});
  CHECK(latest.at("n2").node == "n2");  // from the file's name
  CHECK(latest.at("n2").gpus.empty());
}

TEST_CASE("node records: a health detail the plugin cut is read, marked with its full length") {
  const auto r = parse_node_records(
      "{\"v\":1,\"kind\":\"health\",\"job\":5,\"step\":0,\"node\":\"n1\",\"ok\":false,\"exit_code\":1,"
      "\"detail\":\"Xid 79 on GPU 0000:3b:00.0 and\",\"detail_truncated\":true,\"detail_bytes\":5000,\"time\":10.5}\n",
      "n1");
  CHECK(r.problems.empty());
  REQUIRE(r.health.size() == 1);
  CHECK(r.health[0].detail == "Xid 79 on GPU 0000:3b:00.0 and [cut from 5000 bytes]");
  CHECK(r.health[0].detail_bytes == 5000);
  CHECK_FALSE(r.health[0].ok);
}

TEST_CASE("node records: a torn last line, a bad line, a future version are problems, not failures") {
  const auto r = parse_node_records(
      "{\"v\":1,\"kind\":\"task-exit\",\"step\":0,\"rank\":2,\"exit_code\":0,\"signal\":15,\"time\":3}\n"
      "garbage\n"
      "\n"
      "{\"v\":2,\"kind\":\"task-exit\"}\n"
      "{\"v\":1,\"kind\":\"something-new\"}\n"
      "{\"v\":1,\"kind\":\"task-exit\",\"rank\":\"x\"}\n"
      "{\"v\":1,\"kind\":\"task-exit\",\"step\":0,\"ra",
      "n2");
  REQUIRE(r.exits.size() == 1);
  CHECK(r.exits[0].node == "n2");
  CHECK(r.exits[0].signal == 15);
  REQUIRE(r.problems.size() == 4);
  CHECK(r.problems[0] == "n2:2: not a JSON object (skipped)");
  CHECK(r.problems[1] == "n2:4: unsupported record version (skipped)");
  CHECK(r.problems[2].starts_with("n2:6: missing or bad field"));
  CHECK(r.problems[3] == "n2:7: torn last line (skipped)");
}

TEST_CASE("first failure: the failing rank, not the ranks killed after it") {
  const std::vector<TaskExit> exits = {exit_of("n1", 0, 0, SIGTERM, 100.02), exit_of("n3", 2, 0, SIGKILL, 100.03),
                                       exit_of("n2", 1, 3, 0, 100.01), exit_of("n1", 3, 0, 0, 99.0)};
  const auto first = first_failure(exits);
  REQUIRE(first);
  CHECK(first->node == "n2");
  CHECK(first->rank == 1);
}

TEST_CASE("first failure: a kill stamped a little before the failure (clock skew) is still not first") {
  const auto first = first_failure({exit_of("n1", 0, 0, SIGKILL, 99.9), exit_of("n2", 1, 1, 0, 100.0)});
  REQUIRE(first);
  CHECK(first->node == "n2");
}

TEST_CASE("first failure: a kill long before another failure is the first (an OOM kill, then a timeout)") {
  const auto first = first_failure({exit_of("n1", 0, 0, SIGKILL, 50.0), exit_of("n2", 1, 1, 0, 100.0)});
  REQUIRE(first);
  CHECK(first->node == "n1");
}

TEST_CASE("first failure: only kills, ties by rank, other signals, nothing failed") {
  auto first = first_failure({exit_of("n2", 1, 0, SIGKILL, 5.0), exit_of("n1", 0, 0, SIGKILL, 5.0)});
  REQUIRE(first);
  CHECK(first->rank == 0);
  first = first_failure({exit_of("n1", 0, 0, SIGTERM, 5.0), exit_of("n2", 1, 0, SIGSEGV, 5.5)});
  REQUIRE(first);
  CHECK(first->node == "n2");
  CHECK_FALSE(first_failure({exit_of("n1", 0, 0, 0, 1.0), exit_of("n2", 1, 0, 0, 2.0)}));
  CHECK_FALSE(first_failure({}));
}

TEST_CASE("first failure: exits within the clock margin are simultaneous; the lowest rank, not the earliest stamp") {
  // n4's clock runs 0.8 s ahead or behind: which exit was first is not knowable.
  const auto first = first_failure({exit_of("n4", 3, 1, 0, 100.0), exit_of("n2", 1, 1, 0, 100.8)});
  REQUIRE(first);
  CHECK(first->node == "n2");
  CHECK(first->rank == 1);
}

TEST_CASE("first failure: a kill stamped up to the clock margin before a failure is not first") {
  const auto first = first_failure({exit_of("n1", 0, 0, SIGKILL, 100.0), exit_of("n3", 2, 1, 0, 100.0 + kClockMargin - 0.5)});
  REQUIRE(first);
  CHECK(first->node == "n3");
}

TEST_CASE("first failure: within the margin a failure that is not a kill beats the kills, whatever their ranks") {
  const auto first = first_failure({exit_of("n1", 0, 0, SIGKILL, 100.0), exit_of("n2", 1, 0, SIGTERM, 100.1),
                                    exit_of("n3", 5, 0, SIGSEGV, 101.0), exit_of("n4", 7, 3, 0, 101.9)});
  REQUIRE(first);
  CHECK(first->rank == 5);
}

TEST_CASE("first failure: within the margin a step's task beats the batch script that failed because of it") {
  const auto first = first_failure({{"n1", kBatchStep, 0, kHealthExitCode, 0, 100.0}, {"n3", 0, 2, kHealthExitCode, 0, 100.3}});
  REQUIRE(first);
  CHECK(first->node == "n3");
}

TEST_CASE("first failure: beyond the margin the earlier stamp wins; a larger kill grace widens the margin") {
  const std::vector<TaskExit> exits = {exit_of("n4", 3, 1, 0, 100.0), exit_of("n1", 0, 1, 0, 100.0 + kClockMargin + 0.5)};
  CHECK(first_failure(exits)->node == "n4");
  CHECK(first_failure(exits, kClockMargin + 1.0)->node == "n1");
}

TEST_CASE("failed health: sorted, unique") {
  const std::vector<HealthCheck> checks = {
      {"n3", 0, false, 1, "ecc", 1}, {"n1", 0, true, 0, "", 1}, {"n2", 0, false, 124, "timed out", 1}, {"n3", 1, false, 1, "", 2}};
  CHECK(failed_health(checks) == std::vector<std::string>{"n2", "n3"});
  CHECK(failed_health({}).empty());
}

TEST_CASE("reading a job's records: every node file, ordered by time; symlinks and other files skipped") {
  mlsup::test::TempDir dir;
  dir.write("nodes/42/n1.jsonl",
            "{\"v\":1,\"kind\":\"task-exit\",\"step\":0,\"node\":\"n1\",\"rank\":0,\"exit_code\":0,\"signal\":15,\"time\":2}\n");
  dir.write("nodes/42/n2.jsonl",
            "{\"v\":1,\"kind\":\"task-exit\",\"step\":0,\"node\":\"n2\",\"rank\":1,\"exit_code\":3,\"signal\":0,\"time\":1}\n");
  dir.write("nodes/42/notes.txt", "not a record\n");
  const auto other = dir.write("elsewhere.jsonl",
                               "{\"v\":1,\"kind\":\"task-exit\",\"step\":0,\"rank\":9,\"exit_code\":1,\"signal\":0,\"time\":0}\n");
  std::filesystem::create_symlink(other, dir.path() + "/nodes/42/n9.jsonl");
  const auto r = read_node_records(dir.path(), 42);
  CHECK(r.problems.empty());
  REQUIRE(r.exits.size() == 2);
  CHECK(r.exits[0].node == "n2");
  CHECK(r.exits[1].node == "n1");
  CHECK(first_failure(r.exits)->node == "n2");
  CHECK(read_node_records(dir.path(), 43).exits.empty());
  CHECK(read_node_records(dir.path() + "/missing", 42).problems.empty());
}
