#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <sys/stat.h>

#include "config/load.h"
#include "edges/process.h"
#include "journal/atomic_file.h"
#include "render/chain.h"
#include "render/submission.h"
#include "support.h"

using namespace mlsup;

namespace {

// A chain campaign in a temporary folder; run() executes the preamble in bash, as a task would.
struct Chain {
  test::TempDir dir;
  config::Config config;

  Chain() {
    dir.write("job.sbatch", "#!/bin/bash\n#SBATCH --nodes=1\nsrun true\n");
    // scontrol show hostnames, for a task whose allocation is SLURM_JOB_NODELIST="n1,n2"
    const auto fake = dir.write("bin/scontrol", "#!/bin/sh\necho \"$3\" | tr ',' '\\n'\n");
    ::chmod(fake.c_str(), 0755);
    config = config::load_config_file(dir.write("c.yaml", "name: t\ntemplate: job.sbatch\n"
                                                          "slurm: {array: \"1-5%1\", chain_start_wait: 1s}\n"))
                 .value();
  }

  void prepare(int attempt, const std::string& resume, std::vector<std::string> exclude = {}) {
    std::filesystem::create_directories(render::chain_dir(config));
    REQUIRE(journal::write_atomically(render::chain_dir(config) + "/next.env",
                                      render::chain_values(config, {attempt, resume, std::move(exclude)})));
  }

  // The preamble, then tail, in shell (bash by default), with env on top of a task's Slurm variables.
  edges::ProcessResult run(const std::string& nodes = "n1,n2",
                           const std::string& tail = "echo \"$MLSUP_ATTEMPT|$MLSUP_RESUME_FROM|$MLSUP_HEARTBEAT_FILE\"\n",
                           std::vector<std::pair<std::string, std::string>> env = {}, const std::string& shell = "bash") {
    edges::ProcessRequest r;
    r.argv = {shell, "-c", render::chain_preamble(config) + tail};
    r.env_add = {{"PATH", dir.path() + "/bin:/usr/bin:/bin"}, {"SLURM_JOB_ID", "42"}, {"SLURM_ARRAY_TASK_ID", "3"},
                 {"SLURM_JOB_NODELIST", nodes}};
    r.env_add.insert(r.env_add.end(), env.begin(), env.end());
    r.timeout = std::chrono::seconds(20);
    return edges::run_process(r);
  }

  std::string claim(int attempt) const {
    std::ifstream in(render::chain_dir(config) + "/claims/" + std::to_string(attempt) + "/task");
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
};

}  // namespace

TEST_CASE("a chain's script takes the attempt at the task's start, after its #SBATCH lines") {
  Chain c;
  const auto plan = render::plan_submission(c.config, "#!/bin/bash\n#SBATCH --nodes=1\n\n# mine\nsrun true\n", {1});
  REQUIRE(plan.has_value());
  const auto take = plan->script.find("mlsup_take_attempt\n");
  CHECK(plan->script.find("#SBATCH --nodes=1") < take);
  CHECK(take < plan->script.find("srun true"));
  CHECK(plan->script.find("# mine") < take);
  CHECK(render::insert_after_header("#!/bin/sh\necho hi\n", "X\n") == "#!/bin/sh\nX\necho hi\n");
  CHECK(render::insert_after_header("#!/bin/sh", "X\n") == "#!/bin/sh\nX\n");
}

TEST_CASE("a chain needs a shell script and a one-at-a-time array") {
  Chain c;
  const auto py = render::plan_submission(c.config, "#!/usr/bin/env python3\nprint(1)\n", {1});
  REQUIRE_FALSE(py.has_value());
  CHECK(py.error().message.find("shell batch script") != std::string::npos);
  c.config.slurm.array_spec.reset();
  c.config.slurm.array.clear();
  const auto wide = render::plan_submission(c.config, "#!/bin/bash\n#SBATCH --array=0-9%4\nsrun true\n", {1});
  REQUIRE_FALSE(wide.has_value());
  CHECK(wide.error().str().find(":2:1: --array: \"0-9%4\" lets tasks run side by side") != std::string::npos);
}

TEST_CASE("the preamble claims the prepared attempt once, and with nothing new it takes the next number") {
  Chain c;
  c.prepare(2, "/ck/step 20");
  auto r = c.run();
  CHECK(r.exit_code == 0);
  CHECK(r.out == "2|/ck/step 20|" + c.config.heartbeat.dir + "/attempt-2\n");
  CHECK(c.claim(2) == "42 3 prepared /ck/step 20\n");
  r = c.run();  // attempt 2 is taken and mlsup wrote nothing new within chain_start_wait
  CHECK(r.exit_code == 0);
  CHECK(r.out == "3|/ck/step 20|" + c.config.heartbeat.dir + "/attempt-3\n");
  CHECK(c.claim(3) == "42 3 fallback /ck/step 20\n");
}

TEST_CASE("a task whose allocation holds a node excluded from the attempt leaves without claiming it") {
  Chain c;
  c.prepare(4, "", {"n9", "n2"});
  const auto r = c.run("n1,n2");
  CHECK(r.exit_code == 0);
  CHECK(r.out.empty());
  CHECK(r.err.find("node n2 is excluded from attempt 4") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(render::chain_dir(c.config) + "/claims/4"));
  CHECK(c.run("n1,n3").out.rfind("4|", 0) == 0);
}

namespace {

// The MLSUP_* variables a script printed with `env`, as NAME -> value.
std::map<std::string, std::string> mlsup_env(const std::string& out) {
  std::map<std::string, std::string> vars;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("MLSUP_", 0) == 0) vars[line.substr(0, line.find('='))] = line.substr(line.find('=') + 1);
  return vars;
}

// The batch step of a task submitted with attempt 1's values, as the SPANK plugin leaves it.
std::vector<std::pair<std::string, std::string>> plugin_batch_env(const config::Config& c) {
  const std::string p1 = render::heartbeat_file(c, 1);
  return {{"MLSUP_ATTEMPT", "1"}, {"MLSUP_RESUME_FROM", ""}, {"MLSUP_EXCLUDE", ""},
          {"MLSUP_HEARTBEAT_FILE", p1 + ".d/n1.0"}, {"MLSUP_ATTEMPT_HEARTBEAT_FILE", p1}};
}

}  // namespace

TEST_CASE("every value of a chain task that depends on its attempt follows the attempt, the plugin's base path too") {
  Chain c;
  c.prepare(2, "/ck/step 20", {"n7"});
  auto vars = mlsup_env(c.run("n1,n2", "env\n", plugin_batch_env(c.config)).out);
  for (const auto& [name, value] : render::job_environment(c.config, {2, "/ck/step 20", {"n7"}})) {
    CAPTURE(name);
    CHECK(vars[name] == value);
  }
  // srun steps' per-task heartbeats (the plugin starts from this) go under attempt 2's path
  CHECK(vars["MLSUP_ATTEMPT_HEARTBEAT_FILE"] == render::heartbeat_file(c.config, 2));

  vars = mlsup_env(c.run("n1,n2", "env\n", plugin_batch_env(c.config)).out);  // fallback: attempt 3
  CHECK(vars["MLSUP_ATTEMPT"] == "3");
  CHECK(vars["MLSUP_HEARTBEAT_FILE"] == render::heartbeat_file(c.config, 3));
  CHECK(vars["MLSUP_ATTEMPT_HEARTBEAT_FILE"] == render::heartbeat_file(c.config, 3));
}
