#include <doctest/doctest.h>

#include <vector>

#include "edges/pacer.h"

using namespace mlsup::edges;

TEST_CASE("pacer: a burst goes at once, then one call per interval; an idle spell refills the burst") {
  double clock = 100;
  std::vector<double> slept;
  Pacer pacer(2, 3, [&] { return clock; }, [&](double s) { slept.push_back(s); clock += s; });
  std::vector<double> went;
  for (int i = 0; i < 7; ++i) {
    pacer.wait();
    went.push_back(clock);
  }
  // 3 at once, then every 0.5 s.
  CHECK(went == std::vector<double>{100, 100, 100, 100.5, 101, 101.5, 102});
  clock += 10;  // quiet for 10 s
  for (int i = 0; i < 3; ++i) CHECK(pacer.wait() == 0);
  CHECK(pacer.wait() == doctest::Approx(0.5));
}

TEST_CASE("pacer: 100 callers at once at 2 per second with a burst of 4 take 48 s for the last") {
  double clock = 0;
  Pacer pacer(2, 4, [&] { return clock; }, [](double) {});
  double longest = 0;
  for (int i = 0; i < 100; ++i) longest = pacer.wait();  // all reserve at t = 0 (no sleeping)
  CHECK(longest == doctest::Approx(48));
}

TEST_CASE("pacer: reserve takes a turn without sleeping, and turns taken that way space later ones out") {
  double clock = 0;
  int sleeps = 0;
  Pacer pacer(2, 2, [&] { return clock; }, [&](double) { ++sleeps; });
  CHECK(pacer.reserve() == 0);
  CHECK(pacer.reserve() == 0);
  CHECK(pacer.reserve() == doctest::Approx(0.5));  // the burst is spent: the turn after 0.5 s
  CHECK(pacer.reserve() == doctest::Approx(1.0));
  CHECK(sleeps == 0);
  clock = 1.0;  // the reserved turns came: a caller now waits behind them
  CHECK(pacer.wait() == doctest::Approx(0.5));
  CHECK(sleeps == 1);
}
