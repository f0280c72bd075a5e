#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "config/load.h"
#include "render/submission.h"
#include "support.h"

using namespace mlsup;

namespace {

const char* const kTemplates[] = {"srun", "torchrun", "accelerate", "megatron"};

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Renders a shipped template with the variables its README asks for.
render::Submission render_shipped(const mlsup::test::TempDir& dir, const std::string& name, const std::string& extra_yaml) {
  const std::string tmpl = mlsup::test::source_dir() + "/templates/" + name + ".sbatch.tmpl";
  const std::string yaml = "name: t\ntemplate: " + tmpl +
                           "\nvars: {script: \"my train.py\", script_args: \"--lr 3e-4\", nproc_per_node: 2}\n" + extra_yaml;
  auto config = config::load_config_file(dir.write("c.yaml", yaml));
  if (!config) FAIL(config.error().front().str());
  auto s = render::plan_submission(*config, read(tmpl), {.number = 2, .resume_from = "/ck/iter_0000010"});
  if (!s) FAIL(s.error().str());
  for (const auto& w : s->warnings) FAIL_CHECK("a shipped template gets a warning: " << w.str());
  return *s;
}

}  // namespace

TEST_CASE("every shipped template renders, with and without Slurm settings, into a script bash accepts") {
  for (const char* name : kTemplates) {
    for (const char* extra : {"", "slurm: {nodes: 2, ntasks_per_node: 1, partition: gpu, time: \"01:00:00\", signal: USR2}\n"}) {
      CAPTURE(name);
      CAPTURE(extra);
      mlsup::test::TempDir dir;
      const auto s = render_shipped(dir, name, extra);
      CHECK(s.script.rfind("#!/bin/bash\n", 0) == 0);
      CHECK(s.script.find("set -eo pipefail") != std::string::npos);
      CHECK(s.script.find("{{") == std::string::npos);
      CHECK(s.script.find("'my train.py'") != std::string::npos);
      CHECK(s.script.find("wait") != std::string::npos);
      CHECK(s.script.find("trap") != std::string::npos);
      const std::string path = dir.write("job.sbatch", s.script);
      CHECK(std::system(("bash -n '" + path + "'").c_str()) == 0);
    }
  }
}

TEST_CASE("a shipped template traps the configured pre-timeout signal") {
  for (const char* name : kTemplates) {
    CAPTURE(name);
    mlsup::test::TempDir dir;
    const auto s = render_shipped(dir, name, "slurm: {signal: USR2}\n");
    CHECK(s.script.find("pre_timeout_signal=USR2\n") != std::string::npos);
    CHECK(s.script.find("--signal=B:USR2@") != std::string::npos);
    std::istringstream lines(s.script);
    for (std::string line; std::getline(lines, line);) {
      const auto code = line.substr(0, line.find('#'));  // comments may name other signals
      CAPTURE(line);
      if (code.find("trap") != std::string::npos) CHECK(code.find("USR1") == std::string::npos);
    }
  }
}

TEST_CASE("a shipped template without its variables is an error that names them") {
  mlsup::test::TempDir dir;
  const std::string tmpl = mlsup::test::source_dir() + "/templates/srun.sbatch.tmpl";
  auto config = config::load_config_file(dir.write("c.yaml", "name: t\ntemplate: " + tmpl + "\n")).value();
  const auto s = render::plan_submission(config, read(tmpl), {});
  REQUIRE_FALSE(s.has_value());
  CHECK(s.error().message.find("undefined variable") != std::string::npos);
  CHECK(s.error().subject.rfind("vars.", 0) == 0);
}
