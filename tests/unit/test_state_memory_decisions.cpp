// decisions_of: what a pass decided is told apart from what it only observed, so that memory.json is
// written at once for the one and at most every memory_save_interval for the other.
#include <doctest/doctest.h>

#include "config/config.h"
#include "state/memory.h"

using namespace mlsup;
using engine::Memory;

namespace {

config::HeartbeatSettings calibrating() {
  config::HeartbeatSettings h;
  h.calibrate = true;
  h.calibrate_factor = 3;
  h.calibrate_min = config::Seconds(5);
  h.steady_timeout = config::Seconds(600);
  return h;
}

bool alike(const Memory& a, const Memory& b) {
  const auto h = calibrating();
  return engine::decisions_of(a, h, config::Millis(500)) == engine::decisions_of(b, h, config::Millis(500));
}

Memory running() {
  Memory m;
  m.attempt = 3;
  m.running_nodes = "n[1-2]";
  m.calibration.steps = 25;
  m.calibration.longest = 4;  // 3 x (4 s less a poll) = 10.5 s: 11 s in force
  m.steps = {{100, 10}, {101, 11}, {102, 12}};
  m.pace.steps = {1, 1};
  m.pace.saves = {20};
  m.running_seen_at = 102;
  return m;
}

}  // namespace

TEST_CASE("decisions_of: a pass that only observed the training stepping changed no decision") {
  const Memory before = running();
  Memory after = before;
  after.heartbeat.files[""].content = "13\n";
  after.steps.push_back({103, 13});
  after.steps.erase(after.steps.begin());
  after.pace.steps.push_back(1.1);
  after.pace.saving_since = 103;
  after.running_seen_at = 103;
  after.last_progress_wall = 5000;
  after.checkpoints_looked_at = 103;
  after.waited_on_probed_at = 103;
  after.calibration.steps = 26;
  after.calibration.longest = 4.1;  // 10.8 s: still 11 s in force, in whole seconds
  after.sized_path = "/ck/step_10";
  after.sized_bytes = 1e9;
  after.saved_wall = 7;
  after.clock_id = "host-b/boot-2";
  CHECK(alike(before, after));
}

TEST_CASE("decisions_of: what a decision changed, or what status shows first, is a change") {
  const Memory base = running();
  const auto changed = [&](auto edit) {
    Memory m = base;
    edit(m);
    return !alike(base, m);
  };
  CHECK(changed([](Memory& m) { m.pending_reason = "Priority"; }));
  CHECK(changed([](Memory& m) { m.resubmit = {3, 1, 500}; }));
  CHECK(changed([](Memory& m) { m.cancel.sent = 1; }));
  CHECK(changed([](Memory& m) { m.slurm_error = "Unable to contact slurm controller"; }));
  CHECK(changed([](Memory& m) { m.pace.saves.push_back(21); }));        // a save measured
  CHECK(changed([](Memory& m) { m.calibration.longest = 5; }));          // 14 s in force instead of 11
  CHECK(changed([](Memory& m) { m.first_step_wall = 4000; }));
  CHECK(changed([](Memory& m) { m.attempt = 4; }));
  Memory fresh;
  fresh.steps = {{100, 10}};
  Memory second = fresh;
  second.steps.push_back({101, 11});  // a rate exists from the second step on
  CHECK_FALSE(alike(fresh, second));
  Memory learning;
  learning.calibration.steps = 19;
  Memory calibrated = learning;
  calibrated.calibration.steps = 20;  // the calibrated timeout applies from now on
  CHECK_FALSE(alike(learning, calibrated));
}
