// Two supervisors on one campaign after a lease lapsed: the lease's epoch, the journal's refusal of an
// older epoch's appends, and the engine's check of the lease before each side effect.
#include <doctest/doctest.h>

#include <unistd.h>

#include "engine_fixture.h"
#include "journal/journal.h"
#include "journal/lease.h"

using namespace mlsup;
using mlsup::test::EngineFixture;
using mlsup::test::slurp;
using nlohmann::json;

namespace {

// The tests move a made-up clock: the file server's clock is taken to be that clock.
const journal::ServerClock kSameClock = [](const std::string&) { return std::optional<double>(); };

journal::Identity me() { return {"login1", "boot-a", static_cast<int>(::getpid())}; }
journal::Identity other_host() { return {"login2", "boot-b", 4242}; }

journal::Journal open_journal(const std::string& path) {
  auto j = journal::Journal::open(path, "demo");
  REQUIRE_MESSAGE(j, (j ? "" : j.error().str()));
  return std::move(*j);
}

}  // namespace

TEST_CASE("journal: two writers never give two records one sequence number") {
  test::TempDir tmp;
  const std::string path = tmp.path() + "/journal.jsonl";
  auto first = open_journal(path);
  auto second = open_journal(path);
  REQUIRE(first.append("submit-intent", {{"attempt", 1}}, 10));
  REQUIRE(second.append("ended", {{"attempt", 1}}, 11));  // takes in the first's record, then appends after it
  REQUIRE(first.append("finished", {{"code", 0}}, 12));
  auto again = open_journal(path);
  REQUIRE(again.records().size() == 3);
  CHECK(again.records()[0].seq == 1);
  CHECK(again.records()[1].seq == 2);
  CHECK(again.records()[2].seq == 3);
  CHECK(again.records()[2].type == "finished");
  CHECK(again.warnings().empty());
}

TEST_CASE("journal: a writer of an older epoch is refused once a newer one has written") {
  test::TempDir tmp;
  const std::string path = tmp.path() + "/journal.jsonl";
  auto old_writer = open_journal(path);
  old_writer.set_epoch(3);
  REQUIRE(old_writer.append("submit-intent", {{"attempt", 1}}, 10));
  auto new_writer = open_journal(path);
  new_writer.set_epoch(4);
  REQUIRE(new_writer.append("adopted", {{"attempt", 1}, {"job_id", 7}}, 40));
  const auto refused = old_writer.append("submitted", {{"attempt", 1}, {"job_id", 8}}, 41);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().kind == util::ErrorKind::Superseded);
  CHECK(refused.error().message.find("epoch 4") != std::string::npos);
  auto again = open_journal(path);
  REQUIRE(again.records().size() == 2);
  CHECK(again.records()[1].data["epoch"] == 4);
  CHECK(again.newest_epoch() == 4);
}

TEST_CASE("lease: each acquire gets the next epoch, also after a release; a released lease is free") {
  test::TempDir tmp;
  const std::string path = tmp.path() + "/lease.json";
  {
    auto first = journal::Lease::acquire(path, me(), 1000, 30, kSameClock);
    REQUIRE(first);
    CHECK(first->info().epoch == 1);
    first->release();
  }
  const auto released = journal::read_lease(path);
  REQUIRE(released);
  CHECK(released->expires == 0);
  auto second = journal::Lease::acquire(path, other_host(), 1001, 30, kSameClock);
  REQUIRE(second);
  CHECK(second->info().epoch == 2);
}

TEST_CASE("lease: keep_for extends the lease over a long operation, and fails with a kind once another took it") {
  test::TempDir tmp;
  const std::string path = tmp.path() + "/lease.json";
  auto mine = journal::Lease::acquire(path, me(), 1000, 30, kSameClock);
  REQUIRE(mine);
  REQUIRE(mine->keep_for(1000, 0));
  CHECK(journal::read_lease(path)->expires == 1030);  // long enough already: not rewritten
  REQUIRE(mine->keep_for(1010, 120));                     // an sbatch of up to 120 s
  CHECK(journal::read_lease(path)->expires == 1010 + 120 + 30);
  // A tick on another host 100 s later finds the lease still held.
  const auto tick = journal::Lease::acquire(path, other_host(), 1110, 30, kSameClock);
  REQUIRE_FALSE(tick);
  CHECK(tick.error().kind == util::ErrorKind::Held);
  // Much later the lease has lapsed; the other host takes it, and the first holder learns it.
  REQUIRE(journal::Lease::acquire(path, other_host(), 2000, 30, kSameClock));
  const auto lost = mine->keep_for(2001, 0);
  REQUIRE_FALSE(lost);
  CHECK(lost.error().kind == util::ErrorKind::Superseded);
}

TEST_CASE("engine: the lease is confirmed before sbatch, for as long as sbatch may take; a lost lease submits nothing") {
  EngineFixture f;
  auto c = f.open();
  f.pass(*c);
  REQUIRE(f.submits() == 1);
  CHECK(std::find(f.held_for.begin(), f.held_for.end(), 120.0) != f.held_for.end());
  f.fake.set_state(f.last_job(), slurm::JobState::Failed, 1);
  f.pass(*c);
  f.lease_lost = true;
  f.clock += 6;
  const auto r = c->pass();
  REQUIRE_FALSE(r);
  CHECK(r.error().kind == util::ErrorKind::Superseded);
  CHECK(f.submits() == 1);
  CHECK(slurp(f.config.state_dir + "/journal.jsonl").find("\"attempt\":2") == std::string::npos);
}
