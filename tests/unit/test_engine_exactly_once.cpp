// Exactly once across supervisors: submissions held until journaled, an earlier supervisor's sbatch
// waited for (its job adopted) or ended past its deadline, and jobs with the campaign's tag that the
// journal does not name cancelled as duplicates.
#include <doctest/doctest.h>

#include <fstream>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "edges/process.h"
#include "engine_fixture.h"
#include "journal/lease.h"

using namespace mlsup;
using mlsup::test::EngineFixture;
using nlohmann::json;
using slurm::JobState;

namespace {

// The campaign's id, from its journal's first record.
std::string campaign_id(const EngineFixture& f) {
  std::ifstream in(f.config.state_dir + "/journal.jsonl");
  std::string line;
  while (std::getline(in, line))
    if (auto j = json::parse(line, nullptr, false); j.value("type", "") == "campaign") return j.value("id", "");
  return "";
}

// Appends a record to the journal as another supervisor would have written it.
void append(const EngineFixture& f, long long seq, double time, const std::string& type, json fields) {
  fields["seq"] = seq;
  fields["time"] = time;
  fields["type"] = type;
  std::ofstream(f.config.state_dir + "/journal.jsonl", std::ios::app) << fields.dump() << "\n";
}

// A journal left by a supervisor that died while the sbatch of attempt 1 ran as pid (on this host
// unless host is given); returns attempt 1's tag.
std::string died_during_sbatch(EngineFixture& f, int pid, long long start_ticks, std::string host = "") {
  { auto c = f.open(); }  // the campaign record
  const auto me = journal::current_identity();
  const std::string tag = "mlsup:t:" + campaign_id(f) + ":1";
  append(f, 2, f.clock, "submit-intent", {{"attempt", 1}, {"tag", tag}, {"resume_from", ""}, {"resume_step", 0}, {"exclude", json::array()}});
  append(f, 3, f.clock, "sbatch-started", {{"attempt", 1}, {"pid", pid}, {"start_ticks", start_ticks},
                                           {"host", host.empty() ? me.host : host}, {"boot_id", me.boot_id}});
  return tag;
}

bool has(const std::vector<std::string>& v, const std::string& item) { return std::find(v.begin(), v.end(), item) != v.end(); }

// The campaign's first submission, whose release fails with error; its job then pends for reason.
slurm::JobId release_fails(EngineFixture& f, engine::Campaign& c, const slurm::Error& error, const std::string& reason) {
  f.fake.always_failing["release"] = error;
  f.pass(c);
  const auto id = f.last_job();
  f.fake.table[id].state = JobState::Pending;
  f.fake.table[id].reason = reason;
  return id;
}

const slurm::Error kReleaseTimeout{slurm::ErrorKind::Timeout, 0, "Socket timed out on send/recv operation"};

}  // namespace

TEST_CASE("a submission goes to sbatch held, and is released once the journal has it") {
  EngineFixture f;
  auto c = f.open();
  f.pass(*c);
  REQUIRE(f.submits() == 1);
  CHECK(has(f.fake.submitted[0].options, "--hold"));
  const auto id = f.last_job();
  const auto submit = std::find(f.fake.calls.begin(), f.fake.calls.end(), "submit");
  const auto release = std::find(f.fake.calls.begin(), f.fake.calls.end(), "release " + std::to_string(id));
  CHECK(release != f.fake.calls.end());
  CHECK(submit < release);
  const std::string journal = mlsup::test::slurp(f.config.state_dir + "/journal.jsonl");
  CHECK(journal.find("\"type\":\"submitted\"") < journal.find("\"type\":\"released\""));
}

TEST_CASE("a release that fails is made by the next pass") {
  EngineFixture f;
  auto c = f.open();
  const auto id = release_fails(f, *c, kReleaseTimeout, "JobHeldUser");
  f.fake.always_failing.clear();
  f.pass(*c);
  CHECK(f.calls("release " + std::to_string(id)) == 2);
  CHECK(f.told("release-failed"));
  f.pass(*c);
  CHECK(f.calls("release " + std::to_string(id)) == 2);  // released: not again
}

TEST_CASE("a release that keeps failing the same way is told once") {
  EngineFixture f;
  auto c = f.open();
  const auto id = release_fails(f, *c, kReleaseTimeout, "JobHeldUser");
  for (int i = 0; i < 4; ++i) f.pass(*c);
  CHECK(f.calls("release " + std::to_string(id)) == 5);
  CHECK(f.events_of("release-failed").size() == 1);
}

TEST_CASE("a release Slurm refuses (a request it can never meet) ends the attempt as refused: cancelled, no stuck alert") {
  EngineFixture f;
  auto c = f.open();
  const auto id = release_fails(f, *c, {slurm::ErrorKind::Rejected, 0, "Requested partition configuration not available now"},
                                "PartitionConfig");
  f.pass(*c);
  CHECK(f.calls("cancel " + std::to_string(id)) == 1);
  CHECK(f.told("cancelling", "class", "refused"));
  CHECK(f.events_of("pending-stuck").empty());
  f.fake.set_state(id, JobState::Cancelled, 0, "");
  f.pass(*c);
  CHECK(f.told("attempt-ended", "reason", "no restart budget is spent"));
}

TEST_CASE("an earlier supervisor's sbatch that still runs is waited for; the job it submits is adopted and released") {
  EngineFixture f;
  const int me = static_cast<int>(::getpid());  // a process that runs: this one
  const auto tag = died_during_sbatch(f, me, edges::process_start_ticks(me).value());
  auto c = f.open();
  f.pass(*c);
  f.pass(*c);
  CHECK(f.submits() == 0);
  CHECK(f.told("sbatch-awaited"));
  f.fake.table[900] = slurm::Job{.job_id = 900, .comment = tag, .state = JobState::Pending, .reason = "JobHeldUser"};
  f.pass(*c);
  CHECK(f.submits() == 0);
  CHECK(f.calls("release 900") == 1);
  CHECK(f.told("adopted"));
}

TEST_CASE("an earlier supervisor's sbatch that has ended without a job: the attempt is submitted at once") {
  EngineFixture f;
  const int me = static_cast<int>(::getpid());
  died_during_sbatch(f, me, edges::process_start_ticks(me).value() + 1);  // the pid is another process's now
  auto c = f.open();
  f.pass(*c);
  CHECK(f.submits() == 1);
  CHECK(f.told("sbatch-ended"));
}

TEST_CASE("an sbatch of another host is waited for until its deadline (sbatch's own and a grace), then the attempt is submitted") {
  EngineFixture f;
  died_during_sbatch(f, 12345, 1, "another-login-node");
  auto c = f.open();
  f.pass(*c);
  f.clock += 100;
  f.pass(*c);
  CHECK(f.submits() == 0);
  f.clock += 60;  // 160 s: past 120 + 30
  f.pass(*c);
  CHECK(f.submits() == 1);
}

TEST_CASE("a job with an attempt's tag that the journal does not name is cancelled as a duplicate, never adopted") {
  EngineFixture f;
  auto c = f.open();
  f.pass(*c);
  const auto id = f.last_job();
  f.fake.set_state(id, JobState::Running);
  const std::string tag = f.fake.table[id].comment;
  f.heartbeat("5\n");
  f.pass(*c);
  f.clock += 400;  // past the sweep period: the campaign's tags are looked for
  f.heartbeat("6\n");
  f.fake.table[901] = slurm::Job{.job_id = 901, .comment = tag, .state = JobState::Pending, .reason = "JobHeldUser"};
  f.pass(*c);
  CHECK(f.calls("cancel 901") == 1);
  CHECK(f.calls("cancel " + std::to_string(id)) == 0);
  CHECK(f.told("duplicate-cancelled"));
  f.fake.table[901].state = JobState::Cancelled;
  f.clock += 400;
  f.heartbeat("7\n");
  f.pass(*c);
  CHECK(f.calls("cancel 901") == 1);  // ended: nothing more to do
}

TEST_CASE("a supervisor that lost its lease writes nothing more: no memory.json, status.json or next.env") {
  EngineFixture f;
  auto c = f.open();
  f.pass(*c);
  const auto id = f.last_job();
  f.fake.set_state(id, JobState::Running);
  f.heartbeat("5\n");
  f.pass(*c);
  const std::string memory = mlsup::test::slurp(f.config.state_dir + "/memory.json");
  const std::string status = mlsup::test::slurp(f.config.state_dir + "/status.json");
  REQUIRE_FALSE(memory.empty());
  REQUIRE_FALSE(status.empty());
  f.lease_lost = true;  // another supervisor took the campaign over while this one was frozen
  f.clock += 3;
  f.heartbeat("9\n");
  f.fake.set_state(id, JobState::Completed);
  CHECK_FALSE(c->pass().has_value());
  CHECK(mlsup::test::slurp(f.config.state_dir + "/memory.json") == memory);
  CHECK(mlsup::test::slurp(f.config.state_dir + "/status.json") == status);
}
