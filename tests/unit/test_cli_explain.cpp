// `mlsup explain`: the evidence rules on any log (--log), with a rules file (--rules) or a config's own
// rules, and on a campaign's attempt; no cluster needed.
#include <doctest/doctest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "cli/exit_codes.h"
#include "cli_run.h"
#include "support.h"

using namespace mlsup;

namespace {

const std::string kLog =
    "step 4100 loss 1.92\n"
    "gpu-12:48213:48390 [3] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 10.0.0.12<43567> failed : "
    "Connection refused\n"
    "Traceback (most recent call last):\n"
    "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1691, remote process exited\n";

}  // namespace

TEST_CASE("explain --log: the shipped rule that matched, its line, class, blame and action") {
  test::TempDir dir;
  const auto log = dir.write("slurm-4321.out", kLog);
  const auto said = test::mlsup_cli({"explain", "--log", log});
  CHECK(said.code == cli::kOk);
  CAPTURE(said.out);
  CHECK(said.out.find("rule:   nccl_connect (shipped)") != std::string::npos);
  CHECK(said.out.find("line 2 of " + log + ":\n  gpu-12:48213:48390 [3] misc/socket.cc:484 NCCL WARN") != std::string::npos);
  CHECK(said.out.find("class:  network") != std::string::npos);
  CHECK(said.out.find("blame:  node_in_line (the pattern's first group: 10.0.0.12)") != std::string::npos);
  CHECK(said.out.find("action: retry: resubmit, excluding the node blamed") != std::string::npos);
  const auto json = test::mlsup_cli({"explain", "--log", log, "--json"});
  const auto j = nlohmann::json::parse(json.out);
  CHECK(j["matched"] == true);
  CHECK(j["rule"] == "nccl_connect");
  CHECK(j["line_number"] == 2);
  CHECK(j["captured"] == "10.0.0.12");
  CHECK(j["action"] == "retry");
  CHECK(j["lines"] == 4);
}

TEST_CASE("explain --rules: a rule of one's own wins over the shipped ones; a bad one is told with its place") {
  test::TempDir dir;
  const auto log = dir.write("out.log", kLog);
  const auto rules = dir.write("rules.yaml",
                               "- name: remote_exit\n"
                               "  pattern: 'remote process (exited)'\n"
                               "  class: software\n"
                               "  action: stop_alert\n");
  const auto said = test::mlsup_cli({"explain", "--rules", rules, "--log", log, "--json"});
  CHECK(said.code == cli::kOk);
  const auto j = nlohmann::json::parse(said.out);
  CHECK(j["rule"] == "remote_exit");
  CHECK(j["user_rule"] == true);
  CHECK(j["line_number"] == 4);
  CHECK(j["action"] == "stop_alert");
  const auto bad = dir.write("bad.yaml", "- name: x\n  pattern: '(('\n  class: software\n");
  const auto refused = test::mlsup_cli({"explain", "--rules", bad, "--log", log});
  CHECK(refused.code == cli::kBadInput);
  CHECK(refused.err.find("bad.yaml:2:12: evidence.rules: pattern: not a regular expression") != std::string::npos);
}

TEST_CASE("explain: a log no rule matches, a log that is not there, nothing to read") {
  test::TempDir dir;
  const auto quiet = dir.write("quiet.log", "step 1 loss 3.0\nstep 2 loss 2.9\n");
  const auto said = test::mlsup_cli({"explain", "--log", quiet});
  CHECK(said.code == cli::kOk);
  CHECK(said.out.find("no rule matches any of the 2 lines of " + quiet) != std::string::npos);
  CHECK(nlohmann::json::parse(test::mlsup_cli({"explain", "--log", quiet, "--json"}).out)["matched"] == false);
  CHECK(test::mlsup_cli({"explain", "--log", dir.path() + "/absent.log"}).code == cli::kBadInput);
  CHECK(test::mlsup_cli({"explain"}).code == cli::kUsage);
}

TEST_CASE("explain CONFIG: the config's rules, and its attempt's output where its events say it is") {
  test::TempDir dir;
  dir.write("job.sbatch", "#!/bin/bash\nsrun true\n");
  const auto config = dir.write("c.yaml",
                                "name: ex\ntemplate: job.sbatch\nevidence:\n  rules:\n"
                                "    - name: fabric\n      pattern: 'ibv_poll_cq failed on ([\\w.-]+)'\n"
                                "      class: network\n      blame: node_in_line\n");
  const auto log = dir.write("out.log", "ibv_poll_cq failed on gpu-9.ib\n" + kLog);
  const auto on_log = nlohmann::json::parse(test::mlsup_cli({"explain", config, "--log", log, "--json"}).out);
  CHECK(on_log["rule"] == "fabric");
  CHECK(on_log["captured"] == "gpu-9.ib");
  CHECK(test::mlsup_cli({"explain", config}).err.find("no attempt yet: campaign ex has not run") != std::string::npos);
  dir.write(".mlsup/ex/journal.jsonl",
            "{\"mlsup_journal\":1,\"campaign\":\"ex\"}\n"
            "{\"seq\":1,\"time\":1000,\"type\":\"campaign\",\"epoch\":1,\"id\":\"abc\",\"name\":\"ex\"}\n"
            "{\"seq\":2,\"time\":1001,\"type\":\"submit-intent\",\"attempt\":1,\"epoch\":1,\"exclude\":[],"
            "\"resume_from\":\"\",\"resume_step\":0,\"tag\":\"mlsup:ex:abc:1\"}\n"
            "{\"seq\":3,\"time\":1002,\"type\":\"submitted\",\"attempt\":1,\"job_id\":4321}\n");
  dir.write(".mlsup/ex/events.jsonl",
            "{\"time\":1100,\"event\":\"attempt-ended\",\"attempt\":1,\"output\":\"" + log + "\"}\n");
  const auto said = test::mlsup_cli({"explain", config, "--attempt", "1", "--json"});
  CAPTURE(said.err);
  REQUIRE(said.code == cli::kOk);
  const auto j = nlohmann::json::parse(said.out);
  CHECK(j["attempt"] == 1);
  CHECK(j["log"] == log);
  CHECK(j["rule"] == "fabric");
  CHECK(test::mlsup_cli({"explain", config, "--attempt", "7"}).code == cli::kUsage);
  CHECK_FALSE(j.contains("at_ending"));  // not ended yet
  std::ofstream(dir.path() + "/.mlsup/ex/journal.jsonl", std::ios::app)
      << "{\"seq\":4,\"time\":1100,\"type\":\"ended\",\"attempt\":1,\"job_id\":4321,\"class\":\"failed\","
         "\"nodes\":\"gpu-9\",\"step\":3,\"progressed\":false,\"action\":\"resubmit\",\"delay\":0,"
         "\"new_exclusion\":true,\"evidence_rule\":\"fabric\",\"evidence_class\":\"network\","
         "\"evidence_action\":\"retry\",\"evidence_line\":1,\"evidence_quote\":\"ibv_poll_cq failed on gpu-9.ib\"}\n";
  const auto ended = nlohmann::json::parse(test::mlsup_cli({"explain", config, "--attempt", "1", "--json"}).out);
  CHECK(ended["at_ending"]["evidence_rule"] == "fabric");
  CHECK(ended["at_ending"]["evidence_line"] == 1);
  CHECK(test::mlsup_cli({"explain", config, "--attempt", "1"}).out.find("at its ending: rule fabric, line 1") !=
        std::string::npos);
}
