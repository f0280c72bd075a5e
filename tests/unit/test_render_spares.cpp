// Spare nodes in the rendered script: the options (N+K nodes, --no-kill), and the preamble run in
// bash as a job would run it: one run of the script's own lines per attempt, each claimed, on the
// nodes mlsup names, with its end status recorded; the job ends when told that nothing comes.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <thread>

#include "config/load.h"
#include "edges/process.h"
#include "journal/atomic_file.h"
#include "render/spares.h"
#include "render/submission.h"
#include "support.h"
#include "util/files.h"

using namespace mlsup;

namespace {

struct Spares {
  test::TempDir dir;
  config::Config config;

  Spares() {
    dir.write("job.sbatch", "#!/bin/bash\nsrun true\n");
    // scontrol show hostnames, for a job whose allocation is SLURM_JOB_NODELIST="n1,n2,n3"
    ::chmod(dir.write("bin/scontrol", "#!/bin/sh\necho \"$3\" | tr ',' '\\n'\n").c_str(), 0755);
    config = config::load_config_file(dir.write("c.yaml", "name: t\ntemplate: job.sbatch\n"
                                                          "slurm: {nodes: 2, ntasks_per_node: 2, spare_nodes: 1}\n"))
                 .value();
  }

  std::string claims(int attempt, const std::string& file) const {
    return util::read_file(config.dir().spares() + "/claims/" + std::to_string(attempt) + "/" + file).value_or("");
  }

  // Runs the job's script as Slurm would start job 42 on n1,n2,n3 for attempt 1.
  edges::ProcessResult run(const std::string& script) const {
    edges::ProcessRequest r;
    r.argv = {"bash", script};
    r.env_add = {{"PATH", dir.path() + "/bin:/usr/bin:/bin"}, {"SLURM_JOB_ID", "42"}, {"SLURM_JOB_NODELIST", "n1,n2,n3"},
                 {"MLSUP_ATTEMPT", "1"}};
    r.timeout = std::chrono::seconds(30);
    return edges::run_process(r);
  }

  // Waits (up to 10 s) for attempt's run to record its end, then hands the job `next`.
  void after_end(int attempt, const std::string& next) const {
    for (int i = 0; i < 100 && claims(attempt, "end").empty(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    REQUIRE(journal::write_atomically(config.dir().spares() + "/next.env", next));
  }
};

}  // namespace

TEST_CASE("spare nodes: the job asks for the training's nodes and the spares, outlives a node, and runs each attempt itself") {
  Spares s;
  const auto plan = render::plan_submission(s.config, "#!/bin/bash\n#SBATCH --time=10\nsrun true\n", {1});
  REQUIRE(plan.has_value());
  CHECK(std::count(plan->options.begin(), plan->options.end(), "--nodes=3") == 1);
  CHECK(std::find(plan->options.begin(), plan->options.end(), "--nodes=2") == plan->options.end());
  CHECK(std::find(plan->options.begin(), plan->options.end(), "--no-kill") != plan->options.end());
  const auto loop = plan->script.find("mlsup spare nodes");
  CHECK(plan->script.find("#SBATCH --time=10") < loop);
  CHECK(loop < plan->script.find("srun true"));
  const auto py = render::plan_submission(s.config, "#!/usr/bin/env python3\nprint(1)\n", {1});
  REQUIRE_FALSE(py.has_value());
  CHECK(py.error().message.find("shell batch script") != std::string::npos);
  const auto fixed = render::plan_submission(s.config, "#!/bin/bash\nsrun train --resume {{resume_from}}\n", {1});
  REQUIRE_FALSE(fixed.has_value());  // the script runs every attempt of the job
  CHECK(fixed.error().message.find("read $MLSUP_RESUME_FROM instead") != std::string::npos);
}

TEST_CASE("spare nodes: the loop runs each attempt on the nodes mlsup names, ranks in order, and ends when nothing comes") {
  Spares s;
  const std::string body = "echo \"$MLSUP_ATTEMPT|$SLURM_JOB_NODELIST|$SLURM_NTASKS|$(paste -sd, \"$SLURM_HOSTFILE\")\"\nexit 3\n";
  const auto script = s.dir.write("slurm_script", "#!/bin/bash\n" + render::spare_preamble(s.config, 2, 2, "/bin/bash") + body);
  ::chmod(script.c_str(), 0755);
  std::thread mlsup([&] {  // what mlsup does once each run has ended
    render::Attempt second{2, "/ck/step 20"};
    s.after_end(1, render::spare_values(s.config, second, 42, {"n3", "n1"}));
    s.after_end(2, render::spare_values(s.config, {0}, 42, {}));
  });
  const auto done = s.run(script);
  mlsup.join();
  CHECK(done.exit_code == 3);  // the last run's status
  CHECK(done.out == "1|n1,n2|4|n1,n1,n2,n2\n2|n3,n1|4|n3,n3,n1,n1\n");
  CHECK(s.claims(1, "task") == "42 n1,n2\n");
  CHECK(s.claims(2, "task") == "42 n3,n1\n");
  CHECK(s.claims(2, "end") == "3\n");
  CHECK(done.err.find("no attempt is handed to this job") != std::string::npos);
}

TEST_CASE("spare nodes: a run that stops with 0 because mlsup fenced its attempt does not end the job; the next attempt runs") {
  Spares s;
  // the training's contract: a fenced attempt stops (exit 0) without saving
  const std::string fence = s.config.dir().fenced();
  const std::string body = "echo \"$MLSUP_ATTEMPT\"\n[ -e " + fence + "/$MLSUP_ATTEMPT ] && exit 0\nexit 0\n";
  const auto script = s.dir.write("slurm_script", "#!/bin/bash\n" + render::spare_preamble(s.config, 2, 2, "/bin/bash") + body);
  ::chmod(script.c_str(), 0755);
  std::filesystem::create_directories(fence);
  REQUIRE(journal::write_atomically(s.config.dir().fence(1), "hang\n"));  // the hang fenced attempt 1 before its run ended
  std::thread mlsup([&] { s.after_end(1, render::spare_values(s.config, {2, "/ck/step 20"}, 42, {"n3", "n1"})); });
  const auto done = s.run(script);
  mlsup.join();
  CHECK(done.exit_code == 0);  // attempt 2's own end, unfenced
  CHECK(done.out == "1\n2\n");
  CHECK(s.claims(1, "end") == "0\n");
  CHECK(s.claims(2, "end") == "0\n");
}

TEST_CASE("spare nodes: a claim names the job and the nodes, and is nothing until written whole") {
  const auto c = render::parse_spare_claim("42 n1,n3\n");
  REQUIRE(c.has_value());
  CHECK(c->job_id == 42u);
  CHECK(c->nodes == std::vector<std::string>{"n1", "n3"});
  CHECK_FALSE(render::parse_spare_claim("42 n1,n3"));
  CHECK_FALSE(render::parse_spare_claim("42\n"));
  CHECK_FALSE(render::parse_spare_claim("x n1\n"));
}
