// The checkpoint sizing's formulas (decide/plan.h) on value tables worked out by hand.
#include <doctest/doctest.h>

#include <cmath>

#include "decide/plan.h"

using namespace mlsup;
using doctest::Approx;

TEST_CASE("plan: Young/Daly's interval is sqrt(2 x save x MTBF)") {
  struct Row {
    double save, mtbf, interval;
  };
  const Row rows[] = {
      {60, 3600, 657.2670690},     // a 1-minute save, a failure an hour: 11 minutes
      {120, 4 * 3600, 1859.0320},  // the book's 2-minute save, a failure every 4 h: 31 minutes
      {30, 24 * 3600, 2276.8399},  // half a minute, a day
      {20, 7230, 537.7732},
      {0, 3600, 0},                // a free save: save all the time
      {60, 0, 0},
  };
  for (const auto& r : rows) {
    CAPTURE(r.save);
    CAPTURE(r.mtbf);
    CHECK(decide::young_daly_interval(r.save, r.mtbf) == Approx(r.interval).epsilon(1e-6));
  }
}

TEST_CASE("plan: the goodput of an interval is its saves' share less the failures' (restart and half a cycle per MTBF)") {
  // 1000 s of compute, 20 s saves: 1000/1020; a failure every 7230 s costing 300 s and half of 1020 s.
  CHECK(decide::expected_goodput(1000, 20, 7230.0, 300) == Approx(1000.0 / 1020 * (1 - 810.0 / 7230)));
  CHECK(decide::expected_goodput(1000, 20, std::nullopt, 300) == Approx(1000.0 / 1020));  // no failure rate
  CHECK(decide::expected_goodput(600, 60, 3600.0, 0) == Approx(600.0 / 660 * (1 - 330.0 / 3600)));
  CHECK(decide::expected_goodput(20000, 60, 3600.0, 600) == 0);  // a cycle longer than the MTBF: nothing kept
  CHECK(decide::expected_goodput(0, 60, 3600.0, 0) == 0);
  // Young's interval is the best first-order choice: a tenth either side gives less.
  const double best = decide::young_daly_interval(60, 4 * 3600);
  const double at_best = decide::expected_goodput(best, 60, 4 * 3600.0, 300);
  CHECK(at_best > decide::expected_goodput(best * 0.7, 60, 4 * 3600.0, 300));
  CHECK(at_best > decide::expected_goodput(best * 1.4, 60, 4 * 3600.0, 300));
}

TEST_CASE("plan: the save interval is the median step distance of the checkpoints times the step time") {
  CHECK(decide::save_every_steps({100, 200, 300, 400}) == 100);
  CHECK(decide::save_every_steps({100, 200, 250, 350, 450}) == 100);  // one early save (the save switch) is outvoted
  CHECK(decide::save_every_steps({500, 1000}) == 500);
  CHECK_FALSE(decide::save_every_steps({500}));
  CHECK_FALSE(decide::save_every_steps({}));
  CHECK(decide::save_interval({100, 200, 300}, 0.5) == Approx(50));
  CHECK_FALSE(decide::save_interval({100, 200, 300}, std::nullopt));
  CHECK_FALSE(decide::save_interval({100}, 0.5));
}

TEST_CASE("plan: MTBF is the running time per failure; with none, the running time is a lower bound") {
  const auto two = decide::mtbf_from(7200, 2);
  REQUIRE(two);
  CHECK(two->seconds == 3600);
  CHECK_FALSE(two->lower_bound);
  const auto none = decide::mtbf_from(7200, 0);
  REQUIRE(none);
  CHECK(none->seconds == 7200);
  CHECK(none->lower_bound);
  CHECK_FALSE(decide::mtbf_from(0, 3));
}

TEST_CASE("plan: the wall to the target, a fitting time limit and the time limits left") {
  CHECK(decide::wall_to_steps(7000, 1.0, 0.5) == Approx(14000));
  CHECK_FALSE(decide::wall_to_steps(7000, std::nullopt, 0.5));
  CHECK_FALSE(decide::wall_to_steps(7000, 1.0, 0));
  // 2 h left: 2h12m plus a 5-minute lead, rounded up to 10 minutes = 2h20m.
  CHECK(decide::fitting_time_limit(7200, 300) == 8400);
  CHECK(decide::fitting_time_limit(0, 0) == 600);
  // 10 h left under a 4 h limit with a 10-minute lead: 3h50m per job, 3 jobs, 2 more limits met.
  CHECK(decide::time_limits_left(36000, 14400, 600) == 2);
  CHECK(decide::time_limits_left(3600, 14400, 600) == 0);
  CHECK(decide::time_limits_left(3600, 0, 600) == 0);
}
