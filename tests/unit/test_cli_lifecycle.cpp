// The lifecycle verbs' command line: a wrong use is refused with its exit code and a message, and
// leaves nothing behind (no request, no record), before Slurm is asked anything.
#include <doctest/doctest.h>

#include <filesystem>
#include <iostream>
#include <sstream>

#include "cli_run.h"
#include "cli/app.h"
#include "decide/exit_codes.h"
#include "engine_fixture.h"

namespace mlsup::test {
namespace {


}  // namespace

TEST_CASE("lifecycle verbs: wrong uses are refused with their codes and change nothing") {
  EngineFixture f;
  {
    auto c = f.open();
    f.pass(*c);
    f.fake.table[f.last_job()].state = slurm::JobState::Completed;
    REQUIRE(f.pass(*c));  // completed
  }
  const std::string conf = f.config.source_file;
  const std::string journal = slurp(f.config.state_dir + "/journal.jsonl");
  struct Row {
    std::vector<std::string> args;
    int code;
    std::string says;
  };
  const std::vector<Row> rows = {
      {{"resume", conf}, decide::kNotStopped, "has completed: there is nothing to resume"},
      {{"pause", conf}, decide::kAlreadyEnded, "has completed: there is nothing to pause"},
      {{"pause", conf, "--now"}, decide::kAlreadyEnded, "has completed"},
      {{"cancel", conf}, decide::kAlreadyEnded, "has completed: there is nothing to cancel"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.args[0]);
    const auto said = mlsup_cli(row.args);
    CHECK(said.code == row.code);
    CHECK(said.err.find(row.says) != std::string::npos);
  }
  CHECK_FALSE(std::filesystem::exists(f.config.state_dir + "/requests"));
  CHECK(slurp(f.config.state_dir + "/journal.jsonl") == journal);
}

namespace {

// The fixture's campaign, stopped by its kill switch after one job.
void stop_by_switch(EngineFixture& f) {
  auto c = f.open();
  f.pass(*c);
  std::filesystem::create_directories(std::filesystem::path(f.config.switches.kill).parent_path());
  std::ofstream(f.config.switches.kill) << "stop\n";
  f.fake.table[f.last_job()].state = slurm::JobState::Completed;
  REQUIRE(f.pass(*c));
}

}  // namespace

TEST_CASE("lifecycle verbs: resume --from a checkpoint the campaign does not have is a usage error, nothing written") {
  EngineFixture f;
  stop_by_switch(f);
  const auto said = mlsup_cli({"resume", f.config.source_file, "--from", f.config.checkpoint.dir + "/step_99"});
  CHECK(said.code == decide::kUsage);
  CHECK(said.err.find("is not a complete checkpoint") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(f.config.state_dir + "/requests"));
  CHECK(std::filesystem::exists(f.config.switches.kill));
}

TEST_CASE("lifecycle verbs: a relative resume --from is taken from the current folder and named in full") {
  EngineFixture f;
  stop_by_switch(f);
  std::filesystem::create_directories(f.config.checkpoint.dir);
  const auto was = std::filesystem::current_path();
  std::filesystem::current_path(f.config.checkpoint.dir);
  const auto said = mlsup_cli({"resume", f.config.source_file, "--from", "./step_99"});
  std::filesystem::current_path(was);
  CHECK(said.code == decide::kUsage);
  CHECK(said.err.find("--from " + f.config.checkpoint.dir + "/step_99 is not a complete checkpoint") != std::string::npos);
}

}  // namespace mlsup::test
