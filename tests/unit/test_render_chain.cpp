#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>
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
  std::chrono::seconds timeout{20};  // a task's preamble that runs longer is killed

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
    std::filesystem::create_directories(config.dir().chain());
    REQUIRE(journal::write_atomically(config.dir().chain() + "/next.env",
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
    r.timeout = timeout;
    return edges::run_process(r);
  }

  std::string claim(int attempt) const {
    std::ifstream in(config.dir().chain() + "/claims/" + std::to_string(attempt) + "/task");
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
  CHECK_FALSE(std::filesystem::exists(c.config.dir().chain() + "/claims/4"));
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

namespace {

// A claim folder of attempt made seconds_ago, with no task file in it (its task never recorded itself).
void taskless_claim(const Chain& c, int attempt, int seconds_ago) {
  const std::filesystem::path claim = c.config.dir().chain() + "/claims/" + std::to_string(attempt);
  std::filesystem::create_directories(claim);
  std::filesystem::last_write_time(claim, std::filesystem::file_time_type::clock::now() - std::chrono::seconds(seconds_ago));
}

// A mkdir that fails as a full disk does, except for `mkdir -p` (the claims folder is there already).
void full_disk_mkdir(const Chain& c) {
  const auto fake = c.dir.write("bin/mkdir",
                                "#!/bin/sh\n[ \"$1\" = -p ] && exec /bin/mkdir \"$@\"\n"
                                "echo \"mkdir: cannot create directory '$1': No space left on device\" >&2\nexit 1\n");
  ::chmod(fake.c_str(), 0755);
}

}  // namespace

TEST_CASE("a claims folder the file system refuses ends the task at once, with the claim-failed exit code") {
  Chain c;
  c.dir.write("blocker", "a regular file, where the state folder should be\n");
  c.config.state_dir = c.dir.path() + "/blocker/state";  // ENOTDIR, also for root
  c.config.slurm.chain_start_wait = std::chrono::seconds(30);
  c.timeout = std::chrono::seconds(10);
  const auto r = c.run("n1,n2", "echo the script ran\n", {}, "sh");
  CHECK_FALSE(r.timed_out);
  CHECK(r.exit_code == render::kClaimFailedExit);
  CHECK(r.out.empty());
  CHECK(r.err.find("mlsup: task 3 cannot claim an attempt") != std::string::npos);
  CHECK(r.err.find("Not a directory") != std::string::npos);
}

TEST_CASE("a claim that mkdir refuses for another reason than \"exists\" ends the task at once, not after endless tries") {
  Chain c;
  full_disk_mkdir(c);
  c.timeout = std::chrono::seconds(10);
  c.prepare(2, "");
  auto r = c.run("n1,n2", "echo the script ran\n", {}, "sh");
  CHECK_FALSE(r.timed_out);
  CHECK(r.exit_code == render::kClaimFailedExit);
  CHECK(r.out.empty());
  CHECK(r.err.find("No space left on device") != std::string::npos);
  std::filesystem::remove(c.config.dir().chain() + "/next.env");  // the fallback's loop, from the sbatch values
  r = c.run("n1,n2", "echo the script ran\n", {{"MLSUP_ATTEMPT", "5"}}, "sh");
  CHECK_FALSE(r.timed_out);
  CHECK(r.exit_code == render::kClaimFailedExit);
  CHECK(r.err.find("No space left on device") != std::string::npos);
}

TEST_CASE("a task that cannot record its claim gives it up and ends, rather than run unsupervised") {
  Chain c;
  // mkdir works, but the claim folder then holds a folder where the task file's temporary goes
  const auto fake =
      c.dir.write("bin/mkdir", "#!/bin/sh\n/bin/mkdir \"$@\" || exit\n[ \"$1\" = -p ] || /bin/mkdir \"$1/task.tmp\"\n");
  ::chmod(fake.c_str(), 0755);
  c.prepare(2, "");
  const auto r = c.run("n1,n2", "echo the script ran\n", {}, "sh");
  CHECK(r.exit_code == render::kClaimFailedExit);
  CHECK(r.out.empty());
  const std::string task_file = c.config.dir().chain() + "/claims/2/task";
  CHECK(r.err.find("cannot claim an attempt: writing " + task_file + " failed") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(c.config.dir().chain() + "/claims/2/task"));
}

TEST_CASE("a claim left without its task file is taken over once it is older than the bound, by one task") {
  Chain c;
  c.prepare(2, "/ck/step 20");
  taskless_claim(c, 2, render::kStrandedClaimSeconds + 5);
  const auto r = c.run();
  CHECK(r.exit_code == 0);
  CHECK(r.out == "2|/ck/step 20|" + c.config.heartbeat.dir + "/attempt-2\n");
  CHECK(c.claim(2) == "42 3 prepared /ck/step 20\n");
  CHECK(r.err.find("attempt 2 was claimed") != std::string::npos);
  CHECK(r.err.find("takes it over") != std::string::npos);

  Chain two;  // two tasks at once: one takes attempt 2 over, the other goes on to 3
  two.prepare(2, "");
  taskless_claim(two, 2, render::kStrandedClaimSeconds + 5);
  edges::ProcessResult first, second;
  std::thread other([&] { second = two.run("n1,n2", "echo \"$MLSUP_ATTEMPT\"\n", {{"SLURM_JOB_ID", "43"}}); });
  first = two.run("n1,n2", "echo \"$MLSUP_ATTEMPT\"\n");
  other.join();
  std::vector<std::string> got{first.out, second.out};
  std::sort(got.begin(), got.end());
  CHECK(got == std::vector<std::string>{"2\n", "3\n"});
}

TEST_CASE("a claim renamed away by another task's takeover between the mkdir and the look is tried again, not a refusal") {
  Chain c;
  // the first claim's mkdir fails as if the folder were there, and it is gone when looked at
  const auto fake = c.dir.write("bin/mkdir",
                                "#!/bin/sh\n[ \"$1\" = -p ] && exec /bin/mkdir \"$@\"\n"
                                "[ -e \"$0.once\" ] && exec /bin/mkdir \"$@\"\n: > \"$0.once\"\n"
                                "echo \"mkdir: cannot create directory '$1': File exists\" >&2\nexit 1\n");
  ::chmod(fake.c_str(), 0755);
  c.prepare(2, "/ck/step 20");
  const auto r = c.run();
  CHECK(r.exit_code == 0);
  CHECK(r.out == "2|/ck/step 20|" + c.config.heartbeat.dir + "/attempt-2\n");
  CHECK(c.claim(2) == "42 3 prepared /ck/step 20\n");
}

TEST_CASE("a claim being made (no task file yet, recent) is waited for, not taken") {
  Chain c;
  c.prepare(2, "");
  taskless_claim(c, 2, 0);
  std::thread claimer([&] {  // its task records itself a moment later
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    std::ofstream(c.config.dir().chain() + "/claims/2/task") << "41 2 prepared \n";
  });
  const auto r = c.run();
  claimer.join();
  CHECK(r.exit_code == 0);
  CHECK(r.out.rfind("3|", 0) == 0);
  CHECK(c.claim(2) == "41 2 prepared \n");
}

TEST_CASE("a chain's script may not hold one attempt's values: each task reads them from its environment") {
  Chain c;
  for (const auto& [name, env] : render::per_attempt_variables()) {
    CAPTURE(name);
    const auto plan = render::plan_submission(c.config, "#!/bin/bash\n#SBATCH --nodes=1\necho {{" + name + "}}\n", {1});
    REQUIRE_FALSE(plan.has_value());
    CHECK(plan.error().str().find(":3:6: " + name + ": a chain (slurm.array) renders the script once") != std::string::npos);
    CHECK(plan.error().message.find("read $" + env + " instead") != std::string::npos);
  }
  CHECK(render::per_attempt_variables().size() == 5);
  const auto section = render::plan_submission(c.config, "#!/bin/bash\n{{#resume_from}}\nx\n{{/resume_from}}\n", {1});
  REQUIRE_FALSE(section.has_value());
  CHECK(section.error().str().find(":2:1: resume_from: ") != std::string::npos);
  // values every attempt shares are fine
  CHECK(render::plan_submission(c.config, "#!/bin/bash\necho {{run}} {{state_dir}} {{checkpoint_dir}} {{kill_switch}}\n", {1})
            .has_value());
}
