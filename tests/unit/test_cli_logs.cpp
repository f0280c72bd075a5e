// `mlsup logs`: an attempt's output file from its --output pattern when Slurm no longer knows the job, and
// what it says of a campaign that has not run or an attempt that does not exist.
#include <doctest/doctest.h>

#include <ctime>
#include <string>

#include "cli/exit_codes.h"
#include "cli/logs_verb.h"
#include "cli/status_watch.h"
#include "cli_run.h"
#include "support.h"

using namespace mlsup;
using cli::expand_output_pattern;

TEST_CASE("logs: an --output pattern expands as Slurm expands it, or not at all") {
  CHECK(expand_output_pattern("/s/logs/%x-%j.out", "demo", 4601, std::nullopt, std::nullopt, "ana") == "/s/logs/demo-4601.out");
  CHECK(expand_output_pattern("out/%u/%A_%a.log", "d", 4701, 4700, 3, "ana") == "out/ana/4700_3.log");
  CHECK(expand_output_pattern("%A.out", "d", 4601, std::nullopt, std::nullopt, "ana") == "4601.out");  // not an array
  CHECK(expand_output_pattern("100%%-%j", "d", 7, std::nullopt, std::nullopt, "ana") == "100%-7");
  CHECK_FALSE(expand_output_pattern("%N.out", "d", 7, std::nullopt, std::nullopt, "ana"));  // a node's name: Slurm says
  CHECK_FALSE(expand_output_pattern("%a.out", "d", 7, std::nullopt, std::nullopt, "ana"));  // a task of no array
  CHECK_FALSE(expand_output_pattern("x%", "d", 7, std::nullopt, std::nullopt, "ana"));
}

TEST_CASE("logs: a campaign that has not run says so; an attempt it does not have is wrong use") {
  test::TempDir dir;
  dir.write("job.sbatch", "#!/bin/bash\nsrun true\n");
  const auto config = dir.write("c.yaml", "name: fresh\ntemplate: job.sbatch\n");
  const auto none = test::mlsup_cli({"logs", config});
  CHECK(none.code == cli::kOk);
  CHECK(none.err.find("no attempt yet: campaign fresh has not run") != std::string::npos);
  dir.write(".mlsup/fresh/journal.jsonl",
            "{\"mlsup_journal\":1,\"campaign\":\"fresh\"}\n"
            "{\"seq\":1,\"time\":1000,\"type\":\"campaign\",\"epoch\":1,\"id\":\"abc\",\"name\":\"fresh\"}\n"
            "{\"seq\":2,\"time\":1001,\"type\":\"submit-intent\",\"attempt\":1,\"epoch\":1,\"exclude\":[],"
            "\"resume_from\":\"\",\"resume_step\":0,\"tag\":\"mlsup:fresh:abc:1\"}\n");
  const auto missing = test::mlsup_cli({"logs", config, "--attempt", "4"});
  CHECK(missing.code == cli::kUsage);
  CHECK(missing.err.find("attempt 4: no such attempt (campaign fresh has attempts 1 to 1)") != std::string::npos);
  const auto unsent = test::mlsup_cli({"logs", config});
  CHECK(unsent.code == cli::kRuntimeFailure);
  CHECK(unsent.err.find("attempt 1 has no job yet") != std::string::npos);
}

TEST_CASE("status --watch: the live line reads the heartbeat files of the attempt, and says what Slurm answered") {
  test::TempDir dir;
  config::Config c;
  c.heartbeat.dir = dir.path();
  CHECK_FALSE(cli::live_heartbeat(c, 2, 1e10));
  dir.write("attempt-2.n1.0", "120\n");
  dir.write("attempt-2.n2.1", "118 saving\n");
  dir.write("attempt-1", "999\n");   // another attempt's
  dir.write("attempt-22", "999\n");  // another attempt's, the same prefix
  // Five seconds from now, whole seconds: the files' times may be up to a second past std::time's.
  const auto hb = cli::live_heartbeat(c, 2, static_cast<double>(std::time(nullptr)) + 5);
  REQUIRE(hb);
  CHECK(hb->step == 120);
  CHECK(hb->files == 2);
  CHECK(hb->age >= 3);
  CHECK(hb->age < 60);
  const nlohmann::json job = {{"id", 42}, {"state", "RUNNING"}, {"nodes", "n[1-2]"}};
  CHECK(cli::live_line(cli::LiveHeartbeat{120, 2, 2}, job, 3) ==
        "live: step 120 written 2s ago (2 heartbeat files); Slurm: job 42 RUNNING on n[1-2], asked 3s ago");
  CHECK(cli::live_line(std::nullopt, nullptr, 0) == "live: no heartbeat file yet");
}
