// The alerts a campaign makes of what it sees: a restart budget nearly spent (notify.budget_warn_at)
// and Slurm unanswered for notify.unreachable_after, each told through notify.command with its kind.
#include <doctest/doctest.h>

#include <string>

#include "engine_fixture.h"

using namespace mlsup;
using mlsup::test::EngineFixture;
using mlsup::test::slurp;
using slurm::ErrorKind;
using slurm::JobState;

namespace {

// The command every alert runs: its kind appended to alerts.txt beside the config.
const std::string kNotify = "notify: {command: 'echo \"$MLSUP_ALERT_KIND\" >> alerts.txt', cooldown: 0s, "
                            "unreachable_after: 60s}\n";

}  // namespace

TEST_CASE("a restart that brings a budget to notify.budget_warn_at percent is a budget alert, each one after it too") {
  EngineFixture f(", budgets: {failed: 5/6h}, crash_loop_restarts: 100", kNotify);
  auto c = f.open();
  f.pass(*c);
  for (int failure = 1; failure <= 5; ++failure) {
    CAPTURE(failure);
    f.fake.set_state(f.last_job(), JobState::Failed, 1);
    f.pass(*c);  // ended, resubmission decided with a 5 s backoff
    f.clock += 6;
    f.pass(*c);
    REQUIRE(f.submits() == static_cast<std::size_t>(failure + 1));
    const std::size_t told = failure >= 4 ? failure - 3 : 0;  // 4 of 5 is 80 %
    CHECK(f.events_of("budget-nearly-spent").size() == told);
  }
  CHECK(f.told("budget-nearly-spent", "reason", "the failed budget (5 per 6h) is nearly spent: 4 used, 1 restart left"));
  CHECK(f.told("budget-nearly-spent", "reason", "5 used, the next such ending stops the campaign"));
  CHECK(slurp(f.dir.path() + "/alerts.txt") == "budget\nbudget\n");
}

TEST_CASE("Slurm unanswered for notify.unreachable_after is a trouble alert, once until it answers again") {
  EngineFixture f("", kNotify);
  auto c = f.open();
  f.pass(*c);
  f.fake.set_state(f.last_job(), JobState::Running);
  const auto fail_for = [&](int passes) {
    for (int i = 0; i < passes; ++i) {
      f.fake.next_errors.push_back({ErrorKind::Unreachable, 0, "Unable to contact slurm controller"});
      f.clock += 20;
      CHECK_FALSE(f.pass(*c).has_value());
    }
  };
  fail_for(3);  // failing since the first of them: 40 s
  CHECK(f.events_of("slurm-unreachable").empty());
  fail_for(1);  // 60 s
  CHECK(f.events_of("slurm-unreachable").size() == 1);
  fail_for(5);
  CHECK(f.events_of("slurm-unreachable").size() == 1);
  f.clock += 1;
  f.pass(*c);  // it answers
  fail_for(4);
  CHECK(f.events_of("slurm-unreachable").size() == 2);
  CHECK(slurp(f.dir.path() + "/alerts.txt") == "trouble\ntrouble\n");
}

TEST_CASE("an event notify.on does not choose is logged without a kind and tells nobody; a chosen one is stamped") {
  EngineFixture f("", kNotify);
  auto c = f.open();
  f.pass(*c);
  f.fake.set_state(f.last_job(), JobState::Failed, 1);
  f.pass(*c);  // a restart: not chosen by default
  CHECK(f.events().find("\"alert_kind\"") == std::string::npos);
  CHECK_FALSE(std::filesystem::exists(f.dir.path() + "/alerts.txt"));

  EngineFixture g("", kNotify);
  g.config.notify.on = {"restart"};
  auto d = g.open();
  g.pass(*d);
  g.fake.set_state(g.last_job(), JobState::Failed, 1);
  g.pass(*d);
  CHECK(g.told("attempt-ended", "alert_kind", "restart"));
  CHECK(slurp(g.dir.path() + "/alerts.txt") == "restart\n");
}

TEST_CASE("the checkpoint file system rising to 80% and to 95% is a disk alert, once per rise; falling back re-arms it") {
  EngineFixture f("", kNotify);
  auto c = f.open();
  f.pass(*c);
  f.fake.set_state(f.last_job(), JobState::Running);
  const auto passes = [&](double percent) {  // a minute of passes (it is looked at once a minute) at percent used
    f.disk_percent = percent;
    for (int i = 0; i < 3; ++i) {
      f.clock += 30;
      f.pass(*c);
    }
  };
  passes(50);
  CHECK(f.events_of("disk-nearly-full").empty());
  passes(85);
  CHECK(f.events_of("disk-nearly-full").size() == 1);
  CHECK(f.told("disk-nearly-full", "reason", "checkpoint file system 85% full at "));
  passes(90);  // still WARNING: not told again
  CHECK(f.events_of("disk-nearly-full").size() == 1);
  passes(97);
  CHECK(f.events_of("disk-nearly-full").size() == 2);
  CHECK(f.told("disk-nearly-full", "level", "CRITICAL"));
  passes(40);
  passes(82);  // a new rise
  CHECK(f.events_of("disk-nearly-full").size() == 3);
  CHECK(slurp(f.dir.path() + "/alerts.txt") == "disk\ndisk\ndisk\n");
}

TEST_CASE("a tick (a new process each pass) tells a full disk once: the level is in memory.json") {
  EngineFixture f("", kNotify);
  f.disk_percent = 85;
  for (int tick = 0; tick < 3; ++tick) {
    auto c = f.open();
    f.pass(*c);
    f.clock += 300;
  }
  CHECK(f.events_of("disk-nearly-full").size() == 1);
}

TEST_CASE("a checkpoint file system that fills sooner than disk.runway_alert at the campaign's pace is a disk alert, once "
          "until it recovers") {
  EngineFixture f("", kNotify);
  auto c = f.open();
  f.pass(*c);
  f.fake.set_state(f.last_job(), JobState::Running, 0, "n1");
  for (const int step : {10, 20}) f.dir.write(".mlsup/t/checkpoints/step-" + std::to_string(step) + "/model.bin", std::string(1000, 'w'));
  long long step = 0;
  const auto passes = [&](std::optional<double> free) {  // a minute of passes, a step a second, at free bytes free
    f.disk_free = free;
    for (int i = 0; i < 6; ++i) {
      f.clock += 10;
      step += 10;
      f.heartbeat(std::to_string(step) + "\n");
      f.pass(*c);
    }
  };
  passes(1e12);  // 1e9 saves of 10 s: years
  CHECK(f.events_of("disk-runway-short").empty());
  passes(1e5);   // 100 checkpoints of 1 kB (and a folder), one every 10 s: about 17 minutes
  REQUIRE(f.events_of("disk-runway-short").size() == 1);
  const auto e = f.events_of("disk-runway-short").front();
  CHECK(e["state"] == "filling");
  CHECK(e["runway"].get<double>() < 24 * 3600);
  CHECK(e["checkpoint_bytes"] == 1000);
  CHECK(e["cadence"].get<double>() == doctest::Approx(10));
  CHECK(util::json_text(e["reason"]).find("runway 16m") != std::string::npos);
  passes(1e5);  // still short: not told again
  CHECK(f.events_of("disk-runway-short").size() == 1);
  passes(1e12);
  passes(500);  // no room for the next save: told again
  CHECK(f.events_of("disk-runway-short").size() == 2);
  CHECK(f.events_of("disk-runway-short").back()["state"] == "no-room");
  CHECK(slurp(f.dir.path() + "/alerts.txt") == "disk\ndisk\n");
}
