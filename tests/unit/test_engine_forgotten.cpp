// A job Slurm's controller has forgotten (MinJobAge passed before mlsup looked): its end comes from
// accounting, the plugin's record of the batch script or the script's end record, in that order;
// when none knows, a job that never started, or whose processes its heartbeat shows gone, is submitted
// again (class forgotten); otherwise the campaign is held (exit 15) and nothing is submitted.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "decide/exit_codes.h"
#include "engine_fixture.h"

using namespace mlsup;
using mlsup::test::EngineFixture;
using mlsup::test::slurp;
using slurm::ErrorKind;
using slurm::JobState;

namespace {

// Submits attempt 1, sees it run, then lets the controller forget it; returns its job id.
slurm::JobId run_then_forget(EngineFixture& f, engine::Campaign& c) {
  f.pass(c);
  const slurm::JobId id = f.fake.table.begin()->first;
  f.fake.set_state(id, JobState::Running);
  f.pass(c);
  f.fake.table.clear();  // aged out (MinJobAge) while nobody looked
  return id;
}

// The journal's records of one type.
std::vector<nlohmann::json> records(const EngineFixture& f, const std::string& type) {
  std::vector<nlohmann::json> out;
  std::istringstream in(slurp(f.config.state_dir + "/journal.jsonl"));
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_discarded() && j.value("type", "") == type) out.push_back(j);
  }
  return out;
}

slurm::AccountedJob accounted(slurm::JobId id, JobState state, int code = 0, int sig = 0) {
  return {.job_id = id, .state = state, .exit_code = code, .exit_signal = sig};
}

// What the job's script would have left in <state_dir>/ends/<id>.
void write_end_record(const EngineFixture& f, slurm::JobId id, const std::string& text) {
  std::filesystem::create_directories(f.config.state_dir + "/ends");
  std::ofstream(f.config.state_dir + "/ends/" + std::to_string(id)) << text;
}

// Passes until the campaign ends or `passes` run out, the clock moving 6 s each (past the backoff).
std::optional<engine::Outcome> settle(EngineFixture& f, engine::Campaign& c, int passes = 4) {
  for (int i = 0; i < passes; ++i) {
    if (auto out = f.pass(c)) return out;
    f.clock += 6;
  }
  return std::nullopt;
}

}  // namespace

TEST_CASE("forgotten, accounting says a person cancelled it: the campaign stops (12), nothing is resubmitted") {
  EngineFixture f;
  auto c = f.open();
  f.fake.accounting.available = true;
  const auto id = run_then_forget(f, *c);
  f.fake.accounting.jobs = {accounted(id, JobState::Cancelled)};
  f.fake.accounting.jobs[0].cancelled_by = 1000;
  const auto out = settle(f, *c);
  REQUIRE(out.has_value());
  CHECK(out->exit_code == decide::kCancelledByPerson);
  CHECK(f.submits() == 1);
  const auto ended = records(f, "ended");
  REQUIRE(ended.size() == 1);
  CHECK(ended[0].value("class", "") == "cancelled");
  CHECK(ended[0].value("end_source", "") == "accounting");
}

TEST_CASE("forgotten, accounting says it exited with the do-not-retry code: the campaign stops (13)") {
  EngineFixture f;
  auto c = f.open();
  f.fake.accounting.available = true;
  const auto id = run_then_forget(f, *c);
  f.fake.accounting.jobs = {accounted(id, JobState::Failed, f.config.policy.no_retry_exit_code)};
  const auto out = settle(f, *c);
  REQUIRE(out.has_value());
  CHECK(out->exit_code == decide::kNoRetry);
  CHECK(f.submits() == 1);
}

TEST_CASE("forgotten, accounting says it completed (no target.steps): the campaign is done, not rerun") {
  EngineFixture f;
  auto c = f.open();
  f.fake.accounting.available = true;
  const auto id = run_then_forget(f, *c);
  f.fake.accounting.jobs = {accounted(id, JobState::Completed)};
  const auto out = settle(f, *c);
  REQUIRE(out.has_value());
  CHECK(out->exit_code == decide::kCompleted);
  CHECK(f.submits() == 1);
}

TEST_CASE("forgotten, accounting says it crashed: the next attempt resumes after the backoff") {
  EngineFixture f;
  auto c = f.open();
  f.fake.accounting.available = true;
  const auto id = run_then_forget(f, *c);
  f.fake.accounting.jobs = {accounted(id, JobState::Failed, 1)};
  CHECK_FALSE(settle(f, *c, 3).has_value());
  CHECK(f.submits() == 2);
  const auto ended = records(f, "ended");
  REQUIRE(ended.size() == 1);
  CHECK(ended[0].value("class", "") == "failed");
  CHECK(ended[0].value("exit_code", -1) == 1);
}

TEST_CASE("forgotten, accounting does not answer: nothing is decided until it does") {
  EngineFixture f;
  auto c = f.open();
  f.fake.accounting.available = true;
  const auto id = run_then_forget(f, *c);
  f.fake.failing["accounted"].push_back({ErrorKind::Unreachable, 0, "Connection refused"});
  CHECK_FALSE(f.pass(*c).has_value());
  CHECK(records(f, "ended").empty());
  f.fake.accounting.jobs = {accounted(id, JobState::Cancelled)};
  const auto out = settle(f, *c);
  REQUIRE(out.has_value());
  CHECK(out->exit_code == decide::kCancelledByPerson);
}

TEST_CASE("forgotten, no accounting: the plugin's record of the batch script decides") {
  EngineFixture f;
  auto c = f.open();
  const auto id = run_then_forget(f, *c);
  std::filesystem::create_directories(f.config.state_dir + "/nodes/" + std::to_string(id));
  std::ofstream(f.config.state_dir + "/nodes/" + std::to_string(id) + "/n1.jsonl")
      << "{\"v\":1,\"kind\":\"task-exit\",\"step\":0,\"node\":\"n1\",\"rank\":0,\"exit_code\":1,\"signal\":0,\"time\":1}\n"
      << "{\"v\":1,\"kind\":\"task-exit\",\"step\":-1,\"node\":\"n1\",\"rank\":0,\"exit_code\":"
      << f.config.policy.no_retry_exit_code << ",\"signal\":0,\"time\":2}\n";
  const auto out = settle(f, *c);
  REQUIRE(out.has_value());
  CHECK(out->exit_code == decide::kNoRetry);
  CHECK(records(f, "ended").at(0).value("end_source", "") == "plugin_record");
}

TEST_CASE("forgotten, no accounting, no plugin: the script's end record decides") {
  EngineFixture f;
  auto c = f.open();
  const auto id = run_then_forget(f, *c);
  write_end_record(f, id, "exit_code=0\nsignal=0\n");
  const auto out = settle(f, *c);
  REQUIRE(out.has_value());
  CHECK(out->exit_code == decide::kCompleted);
  CHECK(f.submits() == 1);
  CHECK(records(f, "ended").at(0).value("end_source", "") == "end_record");
}

TEST_CASE("forgotten: accounting outranks the end record (a person's cancel looks like a time limit from inside)") {
  EngineFixture f;
  auto c = f.open();
  f.fake.accounting.available = true;
  const auto id = run_then_forget(f, *c);
  write_end_record(f, id, "exit_code=0\nsignal=15\n");
  f.fake.accounting.jobs = {accounted(id, JobState::Cancelled)};
  const auto out = settle(f, *c);
  REQUIRE(out.has_value());
  CHECK(out->exit_code == decide::kCancelledByPerson);
}

TEST_CASE("forgotten after it ran, no source knows its end, no heartbeat to show it gone: the campaign is held (15)") {
  EngineFixture f;
  f.config.heartbeat.enabled = false;
  auto c = f.open();
  f.fake.accounting.available = true;  // accounting that has no record of it knows nothing either
  run_then_forget(f, *c);
  const auto out = settle(f, *c);
  REQUIRE(out.has_value());
  CHECK(out->exit_code == decide::kEndUnknown);
  CHECK(f.submits() == 1);
  const auto ended = records(f, "ended");
  REQUIRE(ended.size() == 1);
  CHECK(ended[0].value("class", "") == "end_unknown");
  CHECK(ended[0].value("action", "") == "stop");
  CHECK(f.told("stopped", "exit_code", "15"));
  CHECK(f.told("stopped", "alert", "true"));
  f.clock += 600;
  f.pass(*c);
  CHECK(f.submits() == 1);
}

TEST_CASE("after an sbatch of unknown outcome, a job accounting shows with the tag is adopted, though the controller forgot it") {
  EngineFixture f;
  auto c = f.open();
  f.fake.accounting.available = true;
  f.fake.next_errors.push_back({ErrorKind::Timeout, 0, "sbatch did not finish in time"});
  f.pass(*c);
  const auto intents = records(f, "submit-intent");
  REQUIRE(intents.size() == 1);
  auto job = accounted(777, JobState::Completed);
  job.comment = intents[0].value("tag", "");
  f.fake.accounting.jobs = {job};
  for (int t = 0; t < 80; ++t) {  // past the grace: without accounting it would submit again
    f.clock += 1;
    if (f.pass(*c)) break;
  }
  CHECK(f.submits() == 0);
  const auto adopted = records(f, "adopted");
  REQUIRE(adopted.size() == 1);
  CHECK(adopted[0].value("job_id", 0) == 777);
}

TEST_CASE("forgotten after it was seen running: the ending names the nodes it ran on, across a new process's pass (tick)") {
  EngineFixture f;
  auto c = f.open();
  f.fake.accounting.available = true;
  f.pass(*c);
  const slurm::JobId id = f.fake.table.begin()->first;
  f.fake.set_state(id, JobState::Running, 0, "n[1-2]");
  f.pass(*c);
  c.reset();  // the next pass is another process's, as under cron: what it knows comes from memory.json
  f.fake.table.clear();
  f.fake.accounting.jobs = {accounted(id, JobState::Failed, 1)};
  c = f.open();
  f.pass(*c);
  const auto ended = records(f, "ended");
  REQUIRE(ended.size() == 1);
  CHECK(ended[0].value("end_source", "") == "accounting");
  CHECK(ended[0].value("nodes", "") == "n[1-2]");
}
