// The end record: the lines mlsup puts at the top of a shell batch script, and what they leave
// behind when the script exits or is ended by a signal, in bash and in dash.
#include <doctest/doctest.h>

#include <csignal>
#include <filesystem>
#include <fstream>

#include "config/load.h"
#include "edges/process.h"
#include "observe/end_record.h"
#include "render/end_record.h"
#include "render/submission.h"
#include "support.h"

using namespace mlsup;

namespace {

struct Bench {
  test::TempDir dir;
  config::Config config;

  Bench() {
    dir.write("job.sbatch", "#!/bin/bash\nsrun true\n");
    config = config::load_config_file(dir.write("c.yaml", "name: t\ntemplate: job.sbatch\n")).value();
  }

  // The lines, then body, run by shell as job 42's batch script.
  edges::ProcessResult run(const std::string& shell, const std::string& body) const {
    edges::ProcessRequest r;
    r.argv = {shell, "-c", render::end_record_lines(config) + body};
    r.env_add = {{"SLURM_JOB_ID", "42"}};
    r.timeout = std::chrono::seconds(20);
    return edges::run_process(r);
  }

  std::optional<decide::ExitSeen> record() const {
    std::ifstream in(config.dir().ends() + "/42");
    if (!in) return std::nullopt;
    return observe::parse_end_record(std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()));
  }
};

}  // namespace

TEST_CASE("end record: a shell script gets the lines after its header; another interpreter's script is left alone") {
  Bench b;
  const auto sh = render::plan_submission(b.config, "#!/bin/bash\n#SBATCH --nodes=1\nsrun true\n", {1});
  REQUIRE(sh.has_value());
  const auto at = sh->script.find("mlsup_end_record() {");
  REQUIRE(at != std::string::npos);
  CHECK(sh->script.find("#SBATCH --nodes=1") < at);
  CHECK(at < sh->script.find("srun true"));
  const std::string py = "#!/usr/bin/env python3\nprint(1)\n";
  CHECK(render::plan_submission(b.config, py, {1})->script == py);
  CHECK(render::shell_script("#!/bin/sh\n"));
  CHECK(render::shell_script("#!/usr/bin/env bash\necho"));
  CHECK(render::shell_script("#!/bin/bash -l\n"));
  CHECK_FALSE(render::shell_script("#!/usr/bin/python3\n"));
  CHECK_FALSE(render::shell_script("#!\n"));
  CHECK_FALSE(render::shell_script("echo\n"));
}

TEST_CASE("end record: the exit status, and the signal that ended the script, in bash and dash") {
  for (const std::string shell : {"bash", "dash"}) {
    CAPTURE(shell);
    Bench b;
    auto r = b.run(shell, "exit 13\n");
    CHECK(r.exit_code == 13);
    REQUIRE(b.record().has_value());
    CHECK(b.record()->exit_code == 13);
    CHECK(b.record()->signal == 0);
    r = b.run(shell, "true\n");
    CHECK(b.record()->exit_code == 0);
    r = b.run(shell, "kill -TERM $$\nsleep 5\n");
    CHECK(r.signal == SIGTERM);  // Slurm sees the shell ended by the signal, as without the lines
    REQUIRE(b.record().has_value());
    CHECK(b.record()->signal == SIGTERM);
  }
}

TEST_CASE("end record: a script run outside Slurm (no SLURM_JOB_ID), under set -u, ends as it would without the lines") {
  Bench b;
  edges::ProcessRequest r;
  r.argv = {"env", "-u", "SLURM_JOB_ID", "bash", "-c", "set -u\n" + render::end_record_lines(b.config) + "exit 4\n"};
  const auto result = edges::run_process(r);
  CHECK(result.exit_code == 4);
  CHECK(result.err.empty());
  CHECK_FALSE(std::filesystem::exists(b.config.dir().ends()));
}
