// The dead-man's conditions (`mlsup check`): facts of each campaign in, findings with a severity out.
#include <doctest/doctest.h>

#include "views/check.h"

using namespace mlsup::engine;

namespace {

// A campaign whose attempt 2 runs as job 42, supervised now, on a file system half full.
CheckFacts healthy(std::string name = "b") {
  CheckFacts f;
  f.name = std::move(name);
  f.state = Lifecycle::Running;
  f.phase = AttemptPhase::Job;
  f.attempt = 2;
  f.job_id = 42;
  f.job_alive = true;
  f.job_state = "RUNNING";
  f.supervised = true;
  f.since_pass = 30;
  f.stale_after = 600;
  f.disk = DiskUse{"/ckpt", 50, 10};
  return f;
}

std::vector<Finding> findings(const CheckFacts& f, DiskLimits limits = {}) { return check_findings({f}, limits); }

// The one finding of f, as "SEVERITY text".
std::string only(const CheckFacts& f, DiskLimits limits = {}) {
  const auto all = findings(f, limits);
  REQUIRE(all.size() == 1);
  return std::string(severity_name(all[0].severity)) + " " + all[0].text;
}

}  // namespace

TEST_CASE("check: a supervised campaign whose job runs on a roomy disk is OK, and the line counts the states") {
  auto done = healthy("a");
  done.state = Lifecycle::Completed;
  done.phase = AttemptPhase::Ended;
  const std::vector<CheckFacts> all{done, healthy("b")};
  const auto f = check_findings(all, {});
  CHECK(f.empty());
  CHECK(worst(f) == Severity::Ok);
  CHECK(check_line(f, all) == "MLSUP OK - 2 campaigns: 1 completed, 1 running");
}

TEST_CASE("check: a job the journal names that Slurm shows neither running nor queued is CRITICAL") {
  auto f = healthy();
  f.job_alive = false;
  f.job_state = "CANCELLED";
  f.supervised = false;
  CHECK(only(f) == "CRITICAL not running nor queued (job 42 of attempt 2 CANCELLED, no supervisor has followed it up)");
  f.job_state = "";
  CHECK(only(f) == "CRITICAL not running nor queued (job 42 of attempt 2 is forgotten by Slurm, no supervisor has followed it up)");
  const std::vector<CheckFacts> all{f};
  CHECK(check_line(findings(f), all) ==
        "MLSUP CRITICAL - b: not running nor queued (job 42 of attempt 2 is forgotten by Slurm, no supervisor has followed it up)");
}

TEST_CASE("check: a pending job that its partition cannot hold is CRITICAL, with the shortfall; running, it is not") {
  auto f = healthy();
  f.job_state = "PENDING";
  f.shortfall = "asks 64 nodes, 63 usable: e64 down (Not responding)";
  CHECK(only(f) == "CRITICAL job 42 of attempt 2 cannot start: it asks 64 nodes, 63 usable: e64 down (Not responding)");
  f.job_state = "RUNNING";
  CHECK(findings(f).empty());
}

TEST_CASE("check: a campaign not expected to run is not reported for having no job") {
  auto f = healthy();
  f.job_alive = false;
  for (const auto state : {Lifecycle::Paused, Lifecycle::Completed, Lifecycle::Stopped, Lifecycle::Cancelled}) {
    f.state = state;
    CHECK_MESSAGE(findings(f).empty(), lifecycle_name(state));
  }
  f.state = Lifecycle::Running;
  f.stopping = true;  // the kill switch or a cancel: it is on its way out
  CHECK(findings(f).empty());
  f.stopping = false;
  f.held_back = true;  // a set's gate: a dependency or a limit
  CHECK(findings(f).empty());
}

TEST_CASE("check: between attempts, a backoff is OK; nothing submitted without one, or a run never started, warns") {
  auto f = healthy();
  f.phase = AttemptPhase::Ended;
  f.backing_off = true;
  CHECK(findings(f).empty());
  f.backing_off = false;
  CHECK(only(f) == "WARNING attempt 2 ended and nothing was submitted since: not running nor queued");
  f.phase = AttemptPhase::Submitting;
  CHECK(findings(f).empty());  // an sbatch in flight
  f.failed_submissions = 3;
  CHECK(only(f) == "WARNING attempt 2 not submitted: sbatch failed 3 time(s)");
  auto fresh = healthy();
  fresh.state = Lifecycle::NotStarted;
  fresh.phase = AttemptPhase::None;
  fresh.since_pass.reset();
  fresh.supervised = false;
  CHECK(only(fresh) == "WARNING not started: nothing holds it back, and no supervisor has submitted it");
  fresh.held_back = true;
  CHECK(findings(fresh).empty());
}

TEST_CASE("check: Slurm not answering makes a job's fate UNKNOWN, outranked by a CRITICAL") {
  auto f = healthy("a");
  f.job_alive.reset();
  f.slurm_error = "Unable to contact slurm controller";
  CHECK(only(f) == "UNKNOWN job 42 of attempt 2: Slurm could not be asked: Unable to contact slurm controller");
  auto full = healthy("b");
  full.disk->bytes_percent = 99;
  const auto all = check_findings({f, full}, {});
  REQUIRE(all.size() == 2);
  CHECK(worst(all) == Severity::Critical);
  CHECK(all[0].campaign == "b");  // worst first
}

TEST_CASE("check: supervision overdue warns past --stale-after and is CRITICAL past twice it; a held lease is never stale") {
  auto f = healthy();
  f.supervised = false;
  f.since_pass = 600;
  CHECK(findings(f).empty());
  f.since_pass = 601;
  CHECK(only(f) == "WARNING no supervisor has passed for 10m1s (expected within 10m)");
  f.since_pass = 1201;
  CHECK(only(f) == "CRITICAL no supervisor has passed for 20m1s (expected within 10m)");
  f.supervised = true;  // a `run` holds the lease: it renews it while it passes
  CHECK(findings(f).empty());
  f.supervised = false;
  f.state = Lifecycle::Completed;  // an ended campaign needs no supervisor
  CHECK(findings(f).empty());
  f.state = Lifecycle::Running;
  f.since_pass.reset();  // never supervised: told as not started, if at all
  CHECK(findings(f).empty());
}

TEST_CASE("check: the checkpoint file system warns at 80%, is CRITICAL at 95%, by bytes or inodes, thresholds as given") {
  auto f = healthy();
  f.disk = DiskUse{"/ckpt", 79.9, 1};
  CHECK(findings(f).empty());
  f.disk->bytes_percent = 80;
  CHECK(only(f) == "WARNING checkpoint file system 80% full at /ckpt");
  f.disk->bytes_percent = 95.5;
  CHECK(only(f) == "CRITICAL checkpoint file system 95% full at /ckpt");
  f.disk = DiskUse{"/ckpt", 10, 97};
  CHECK(only(f) == "CRITICAL checkpoint file system 97% full (inodes) at /ckpt");
  f.disk = DiskUse{"/ckpt", 10, std::nullopt};  // a file system that counts no inodes
  CHECK(findings(f).empty());
  f.disk->bytes_percent = 10;
  CHECK(only(f, DiskLimits{.warning = 5, .critical = 50}) == "WARNING checkpoint file system 10% full at /ckpt");
  CHECK(only(f, DiskLimits{.warning = 1, .critical = 5}) == "CRITICAL checkpoint file system 10% full at /ckpt");
  f.disk.reset();
  f.disk_error = "/ckpt: statvfs: Permission denied";
  CHECK(only(f) == "UNKNOWN checkpoint file system not measured: /ckpt: statvfs: Permission denied");
}

TEST_CASE("check: a campaign that cannot be read is UNKNOWN, and nothing else is said of it") {
  CheckFacts f;
  f.name = "c.yaml";
  f.load_error = "the config has errors: c.yaml:3:1: name: required";
  CHECK(only(f) == "UNKNOWN the config has errors: c.yaml:3:1: name: required");
  const std::vector<CheckFacts> all{f, healthy()};
  CHECK(check_line(check_findings(all, {}), all) == "MLSUP UNKNOWN - c.yaml: the config has errors: c.yaml:3:1: name: required");
}

TEST_CASE("check: several findings make one line, worst first, each naming its campaign") {
  auto gone = healthy("b");
  gone.job_alive = false;
  gone.job_state = "CANCELLED";
  gone.supervised = false;
  gone.since_pass = 700;
  auto full = healthy("a");
  full.disk->bytes_percent = 85;
  const std::vector<CheckFacts> all{full, gone};
  const auto f = check_findings(all, {});
  CHECK(check_line(f, all) ==
        "MLSUP CRITICAL - b: not running nor queued (job 42 of attempt 2 CANCELLED, no supervisor has followed it up); "
        "a: checkpoint file system 85% full at /ckpt; b: no supervisor has passed for 11m40s (expected within 10m)");
}
