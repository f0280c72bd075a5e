// The quiet pace: a running job whose heartbeat progresses outside any phase may go on Slurm's last
// answer until its heartbeat pauses (three steps, 2 s at least, half the shortest hang timeout at
// most), its time limit comes, or anything but its status was decided; never when running_poll is
// not longer than poll.
#include <doctest/doctest.h>

#include "decide/quiet.h"

using namespace mlsup::decide;

namespace {

// A job running since long, its heartbeat last progressing at mono 100, steps of 0.1 s, no time limit.
QuietSigns stepping() {
  return {.job_running = true, .only_status = true, .heartbeat = true, .in_phase = false, .progress_at = 100,
          .step = 0.1, .job_end = 0, .hang_after = 20, .poll = 0.5, .running_poll = 5};
}

}  // namespace

TEST_CASE("a stepping job goes on Slurm's last answer until its heartbeat pauses for 2 s") {
  const auto s = stepping();
  CHECK(quiet_silence(s) == doctest::Approx(2));
  CHECK(quiet_until(s, 100.4, 1e9) == doctest::Approx(102));
  CHECK(quiet_until(s, 101.9, 1e9) == doctest::Approx(102));
  CHECK(quiet_until(s, 102.0, 1e9) == 0);  // silent for 2 s: Slurm is asked every pass
  CHECK(quiet_until(s, 130.0, 1e9) == 0);
}

TEST_CASE("the silence that counts as a move follows the steps, within running_poll and half the hang timeout") {
  auto s = stepping();
  s.step = 1.2;
  CHECK(quiet_silence(s) == doctest::Approx(3.6));
  s.step = 30;
  CHECK(quiet_silence(s) == doctest::Approx(5));  // never longer than running_poll
  s.hang_after = 6;
  CHECK(quiet_silence(s) == doctest::Approx(3));  // a hang is never declared on an older answer
  s.step.reset();
  s.hang_after = 0;
  CHECK(quiet_silence(s) == doctest::Approx(2));
}

TEST_CASE("anything that moved, or a pace that is not slower, asks Slurm at once") {
  auto s = stepping();
  s.in_phase = true;  // saving, or waiting on its peers
  CHECK(quiet_until(s, 100.5, 1e9) == 0);
  s = stepping();
  s.only_status = false;  // a decision: its outcome is looked at at once
  CHECK(quiet_until(s, 100.5, 1e9) == 0);
  s = stepping();
  s.job_running = false;  // pending, completing, suspended
  CHECK(quiet_until(s, 100.5, 1e9) == 0);
  s = stepping();
  s.heartbeat = false;  // a training without a heartbeat tells nothing cheaper
  CHECK(quiet_until(s, 100.5, 1e9) == 0);
  s = stepping();
  s.running_poll = 0.5;  // running_poll_interval set to poll_interval: every poll asks
  CHECK(quiet_until(s, 100.5, 1e9) == 0);
  s = stepping();
  s.progress_at = 0;  // no progress seen yet
  CHECK(quiet_until(s, 100.5, 1e9) == 0);
}

TEST_CASE("the time limit's end is looked at as it comes") {
  auto s = stepping();
  s.job_end = 1000;                                               // wall
  CHECK(quiet_until(s, 100.5, 998.0) == doctest::Approx(101.5));  // until 1 s before the end
  CHECK(quiet_until(s, 100.5, 998.8) == doctest::Approx(100.7));
  CHECK(quiet_until(s, 100.5, 999.0) == 0);  // 1 s before the end: asked at every pass
  CHECK(quiet_until(s, 100.5, 1001) == 0);
  CHECK(quiet_until(s, 100.5, 900) == doctest::Approx(102));           // far: the heartbeat decides
}
