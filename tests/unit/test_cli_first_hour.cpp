// What a new user trips on at the command line: a mistyped command, a folder given to validate, the
// events of a campaign that never ran, and every verb's help repeating the exit-code table.
#include <doctest/doctest.h>

#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "cli_run.h"
#include "cli/app.h"
#include "cli/campaign_verbs.h"
#include "cli/exit_codes.h"
#include "journal/lease.h"
#include "support.h"

using namespace mlsup;

using test::mlsup_cli;

TEST_CASE("first hour: a mistyped command gets the command it was meant to be and the list") {
  const auto said = mlsup_cli({"statsu", "c.yaml"});
  CHECK(said.code == cli::kUsage);
  CHECK(said.err.find("no command \"statsu\" (did you mean \"status\"?)") != std::string::npos);
  CHECK(said.err.find("the commands are validate, render, run, tick, status, stop, save, events, resume, pause, "
                      "cancel") != std::string::npos);
}

TEST_CASE("first hour: validate given a folder says it wants a config file, not that the config is empty") {
  test::TempDir dir;
  const auto said = mlsup_cli({"validate", dir.path()});
  CHECK(said.code == cli::kBadInput);
  CHECK(said.err.find(dir.path() + ": a folder, not a config file") != std::string::npos);
  CHECK(said.err.find("empty") == std::string::npos);
}

TEST_CASE("first hour: events of a campaign that never ran says so") {
  test::TempDir dir;
  dir.write("job.sbatch", "#!/bin/bash\nsrun true\n");
  const auto config = dir.write("c.yaml", "name: fresh\ntemplate: job.sbatch\n");
  const auto said = mlsup_cli({"events", config});
  CHECK(said.code == cli::kOk);
  CHECK(said.out.empty());
  CHECK(said.err.find("no events yet: campaign fresh has not run") != std::string::npos);
}

TEST_CASE("first hour: a verb's help points to the exit codes; mlsup --help lists them") {
  const auto verb = mlsup_cli({"run", "--help"});
  CHECK(verb.out.find("Exit codes: `mlsup --help` lists them.") != std::string::npos);
  CHECK(verb.out.find("the campaign stopped: the kill switch") == std::string::npos);
  const auto top = mlsup_cli({"--help"});
  CHECK(top.out.find("the campaign stopped: the kill switch") != std::string::npos);
}

TEST_CASE("first hour: mlsup stop and mlsup save leave an event naming who asked") {
  test::TempDir dir;
  dir.write("job.sbatch", "#!/bin/bash\nsrun true\n");
  const auto config = dir.write("c.yaml", "name: acts\ntemplate: job.sbatch\n");
  CHECK(mlsup_cli({"save", config}).code == cli::kOk);
  CHECK(mlsup_cli({"stop", config}).code == cli::kOk);
  const auto events = mlsup_cli({"events", "--json", config});
  CHECK(events.err.empty());
  const auto save = events.out.find("\"event\":\"save-requested\"");
  const auto stop = events.out.find("\"event\":\"stop-requested\"");
  REQUIRE(save != std::string::npos);
  REQUIRE(stop != std::string::npos);
  CHECK(save < stop);
  CHECK(events.out.find("\"by\":\"") != std::string::npos);
}

TEST_CASE("first hour: stop and save take several configs and a folder, as status does") {
  test::TempDir dir;
  dir.write("job.sbatch", "#!/bin/bash\nsleep 1\n");
  dir.write("a.yaml", "name: a\ntemplate: job.sbatch\n");
  dir.write("b.yaml", "name: b\ntemplate: job.sbatch\n");
  const auto stop = mlsup_cli({"stop", dir.path() + "/a.yaml", dir.path() + "/b.yaml"});
  CHECK(stop.code == cli::kOk);
  CHECK(stop.out.find("a  kill switch set: ") != std::string::npos);
  CHECK(stop.out.find("b  kill switch set: ") != std::string::npos);
  CHECK(std::filesystem::exists(dir.path() + "/.mlsup/a/kill-switch"));
  CHECK(std::filesystem::exists(dir.path() + "/.mlsup/b/kill-switch"));
  const auto save = mlsup_cli({"save", dir.path()});
  CHECK(save.code == cli::kOk);
  CHECK(std::filesystem::exists(dir.path() + "/.mlsup/a/save-switch"));
  CHECK(std::filesystem::exists(dir.path() + "/.mlsup/b/save-switch"));
}

TEST_CASE("first hour: without $USER (cron, systemd) who asked is the uid's user, not \"?\"") {
  const char* was = std::getenv("USER");
  const std::string saved = was ? was : "";
  ::unsetenv("USER");
  const std::string by = journal::requester();
  if (was) ::setenv("USER", saved.c_str(), 1);
  const passwd* me = ::getpwuid(::getuid());
  REQUIRE(me);
  CHECK(by == std::string(me->pw_name) + "@" + journal::current_identity().host);
}

TEST_CASE("first hour: a config's error is exit 3 for tick and run as for validate, even where Slurm is not set up") {
  test::TempDir dir;
  dir.write("job.sbatch", "#!/bin/bash\nsrun true\n");
  dir.write("c.yaml", "name: base\ntemplate: job.sbatch\n");
  const auto set = dir.write("night.yaml", "runs:\n  - name: pretrain\n    config: c.yaml\n  - name: finetune\n"
                                           "    config: c.yaml\n    after: [pretrian]\n");
  const char* was = std::getenv("SLURM_CONF");
  const std::string saved = was ? was : "";
  ::setenv("SLURM_CONF", (dir.path() + "/no-such-slurm.conf").c_str(), 1);
  const auto validate = mlsup_cli({"validate", set});
  const auto tick = mlsup_cli({"tick", set});
  const auto run = mlsup_cli({"run", set});
  const auto fine = mlsup_cli({"tick", dir.path() + "/c.yaml"});  // no config error: Slurm's is told
  if (was) ::setenv("SLURM_CONF", saved.c_str(), 1);
  else ::unsetenv("SLURM_CONF");
  for (const auto* said : {&validate, &tick, &run}) {
    CHECK(said->code == cli::kBadInput);
    CHECK(said->err.find("after: no run \"pretrian\" in this set (did you mean \"pretrain\"?)") != std::string::npos);
  }
  CHECK(fine.code == cli::kRuntimeFailure);
  CHECK(fine.err.find("Slurm's configuration is missing") != std::string::npos);
}

TEST_CASE("first hour: validate takes several configs and reports every problem of a config and its template at once") {
  test::TempDir dir;
  dir.write("job.sbatch", "#!/bin/bash\necho {{vars.lr}} {{nmae}}\nsrun train {{vars.batch}}\n");
  const auto bad = dir.write("bad.yaml",
                             "name: bad\ntemplate: job.sbatch\npoll_interval: 5ms\nheartbeat:\n  steady_timeout: fast\n"
                             "  save_timeout: 1s\nvars:\n  lr: \"0.1\"\n");
  const auto good = dir.write("good.yaml", "name: good\ntemplate: job.sbatch\nvars:\n  lr: \"0.1\"\n  batch: \"4\"\n");
  const auto said = mlsup_cli({"validate", bad, good});
  CAPTURE(said.err);
  CHECK(said.code == cli::kBadInput);
  const auto at = [&](const std::string& part) { return said.err.find(part); };
  CHECK(at("bad.yaml:5:19: heartbeat.steady_timeout: \"fast\" is not a duration") != std::string::npos);  // the walk's
  CHECK(at("bad.yaml:3:1: poll_interval: must be at least \"100ms\"") != std::string::npos);           // a check's
  CHECK(at("save_timeout") == std::string::npos);  // an echo of the unreadable steady_timeout: left out
  CHECK(at("job.sbatch:3:12: vars.batch: undefined variable") != std::string::npos);  // the template's, both
  CHECK(at("job.sbatch:2:18: nmae: undefined variable") != std::string::npos);
  const auto second = said.err.rfind("job.sbatch:2:18: nmae");  // good.yaml's own problem: the template's only
  CHECK(second != at("job.sbatch:2:18: nmae"));
  CHECK(said.err.rfind("vars.batch") < second);
}
