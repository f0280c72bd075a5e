// Stragglers: a rank whose own compute per step exceeds the others' median by slower_by for `for`
// seconds, smoothed over its steps, told once; a break starts the window again; one figure per step.
#include <doctest/doctest.h>

#include "decide/stragglers.h"

using namespace mlsup::decide;

namespace {

const StragglerSettings kTwentyPercentTenMinutes{0.2, 600};

// Every rank at step `step`, each with its compute seconds.
std::map<std::string, ComputeSeen> at_step(long long step, const std::map<std::string, double>& compute) {
  std::map<std::string, ComputeSeen> out;
  for (const auto& [rank, c] : compute) out[rank] = {step, c};
  return out;
}

// Four ranks stepping once a minute (step m+1 at t = 100 + 60 m), minutes [from, to): n3.3 at `slow`
// seconds of compute, the others at about 1.0. Every rank told in them.
std::vector<Straggler> run_minutes(std::map<std::string, RankPace>& paces, int from, int to, double slow) {
  std::vector<Straggler> told;
  for (int m = from; m < to; ++m)
    for (auto& s : follow_stragglers(paces, at_step(m + 1, {{"n1.0", 1.0}, {"n1.1", 1.02}, {"n2.2", 0.98}, {"n3.3", slow}}),
                                     100 + 60.0 * m, kTwentyPercentTenMinutes))
      told.push_back(std::move(s));
  return told;
}

}  // namespace

TEST_CASE("stragglers: a rank 50% slower in its own compute is one after ten minutes, not before") {
  std::map<std::string, RankPace> paces;
  CHECK(run_minutes(paces, 0, 10, 1.5).empty());  // slower from t=100; at t=640, 540 s
  const auto told = run_minutes(paces, 10, 11, 1.5);   // t=700: 600 s
  REQUIRE(told.size() == 1);
  CHECK(told[0].rank == "n3.3");
  CHECK(told[0].compute == doctest::Approx(1.5));
  CHECK(told[0].others == doctest::Approx(1.0));
  CHECK(told[0].slower_for == doctest::Approx(600));
  CHECK(paces.at("n1.0").slower_since == 0);
  CHECK(run_minutes(paces, 11, 20, 1.5).empty());  // told once while it stays slower
  CHECK(run_minutes(paces, 20, 30, 1.0).empty());  // back within the allowance
  CHECK_FALSE(paces.at("n3.3").told);
  CHECK(run_minutes(paces, 30, 45, 1.5).size() == 1);  // slower again: told again after another ten minutes
}

TEST_CASE("stragglers: 15% slower is within the allowance, as are a few milliseconds; no compute told, or one rank alone, judges nobody") {
  std::map<std::string, RankPace> paces;
  CHECK(run_minutes(paces, 0, 30, 1.15).empty());
  std::map<std::string, RankPace> untold;
  for (int m = 0; m < 30; ++m)
    CHECK(follow_stragglers(untold, at_step(m, {{"n1.0", -1}, {"n2.1", -1}}), 100 + 60.0 * m, kTwentyPercentTenMinutes).empty());
  std::map<std::string, RankPace> tiny;  // 3 ms against 1 ms: three times slower, and still noise
  for (int m = 0; m < 30; ++m)
    CHECK(follow_stragglers(tiny, at_step(m, {{"n1.0", 0.001}, {"n2.1", 0.003}}), 100 + 60.0 * m, kTwentyPercentTenMinutes).empty());
  std::map<std::string, RankPace> alone;
  for (int m = 0; m < 30; ++m)
    CHECK(follow_stragglers(alone, at_step(m, {{"n1.0", 5.0}}), 100 + 60.0 * m, kTwentyPercentTenMinutes).empty());
}

TEST_CASE("stragglers: of two ranks only the slower one is; a fast step's break starts its window again") {
  std::map<std::string, RankPace> paces;
  const StragglerSettings settings{0.2, 120};
  const auto look = [&](long long step, double slow, double t) {
    return follow_stragglers(paces, at_step(step, {{"a.0", 1.0}, {"b.1", slow}}), t, settings);
  };
  CHECK(look(1, 2.0, 0.5).empty());
  CHECK(look(2, 2.0, 60).empty());
  CHECK(look(3, 0.2, 90).empty());  // smoothed: 0.3 x 0.2 + 0.7 x 2.0 = 1.46, still slower
  for (int i = 0; i < 6; ++i) look(4 + i, 0.2, 100 + i);  // fast for a while: back under 1.2
  CHECK(paces.at("b.1").slower_since == 0);
  CHECK(look(10, 3.0, 200).empty());  // smoothed: 0.9 + 0.7 x 0.35 = 1.14, not yet slower
  CHECK(paces.at("b.1").slower_since == 0);
  CHECK(look(11, 3.0, 210).empty());  // 1.70: slower from here
  CHECK(look(12, 3.0, 300).empty());
  const auto told = look(13, 3.0, 330);
  REQUIRE(told.size() == 1);
  CHECK(told[0].rank == "b.1");
  CHECK(told[0].slower_for == doctest::Approx(120));
}

TEST_CASE("stragglers: a step's figure is taken once, however many passes see it") {
  std::map<std::string, RankPace> paces;
  follow_stragglers(paces, at_step(1, {{"a.0", 1.0}, {"b.1", 1.0}}), 1, kTwentyPercentTenMinutes);
  for (int pass = 0; pass < 5; ++pass)
    follow_stragglers(paces, {{"a.0", {2, 3.0}}, {"b.1", {1, 1.0}}}, 2 + pass, kTwentyPercentTenMinutes);
  CHECK(paces.at("a.0").smoothed == doctest::Approx(0.3 * 3.0 + 0.7 * 1.0));
  CHECK(paces.at("a.0").step == 2);
  follow_stragglers(paces, {}, 10, kTwentyPercentTenMinutes);  // ranks not seen keep their pace
  CHECK(paces.size() == 2);
}
