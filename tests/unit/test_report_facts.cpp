// The report's facts from fake journals: each attempt in the window with its span, ending, steps and the time
// its failure lost; the exclusions in the window; what runs now; the time figures the same as status's.
#include <doctest/doctest.h>

#include "report/facts.h"
#include "report_journal.h"

using namespace mlsup;
using test::fake_facts;
using test::fake_journal;

TEST_CASE("report facts: a failure and its recovery, every attempt with its ending, steps and time lost") {
  const auto f = fake_facts(fake_journal(), 0, 2000);
  REQUIRE(f.attempts.size() == 2);
  const auto& a = f.attempts[0];
  CHECK(a.number == 1);
  CHECK(a.job_id == 101);
  CHECK(a.start == 1010);
  CHECK(a.end == 1310);
  CHECK(a.ending == "failed");
  CHECK(a.action == "resubmit");
  CHECK(a.nodes == "n1");
  CHECK(a.failure);
  CHECK(a.from_step == 0);
  CHECK(a.to_step == 30);
  CHECK(a.kept == 20);  // the second attempt resumed from step 20
  CHECK(a.lost == doctest::Approx(120));  // 300 s for 30 steps, 10 of them recomputed (100 s), and 20 s to the resubmission
  const auto& b = f.attempts[1];
  CHECK(b.ending == "completed");
  CHECK(!b.failure);
  CHECK(b.from_step == 20);
  CHECK(b.to_step == 80);
  CHECK(b.lost == 0);
  CHECK(f.steps_gained == 80);
  CHECK(f.recomputed == 10);
  CHECK(f.failures == 1);
  CHECK(f.lost == doctest::Approx(120));
  CHECK(f.state == "completed");
  CHECK(f.now == "completed: the training completed");
  REQUIRE(f.exclusions.size() == 1);
  CHECK(f.exclusions[0].node == "n1");
  CHECK(f.exclusions[0].attempt == 1);
  CHECK(f.exclusions[0].reason == "first failing task | exit 1");
}

TEST_CASE("report facts: the time figures are status's: the same lost time, goodput as useful over elapsed") {
  const auto f = fake_facts(fake_journal(), 0, 2000);
  CHECK(f.time["lost_to_failures"].get<double>() == doctest::Approx(f.lost));
  CHECK(f.time["useful"].get<double>() == doctest::Approx(800));            // 200 s kept of attempt 1, 600 s of attempt 2
  CHECK(f.time["goodput"].get<double>() == doctest::Approx(800.0 / 931));  // from the first record to the end
  CHECK(f.time["recomputed_steps"] == 10);
}

TEST_CASE("report facts: only the attempts and exclusions of the window; goodput stays the campaign's") {
  const auto f = fake_facts(fake_journal(), 1500, 2000);
  REQUIRE(f.attempts.size() == 1);
  CHECK(f.attempts[0].number == 2);
  CHECK(f.exclusions.empty());
  CHECK(f.failures == 0);
  CHECK(f.lost == 0);
  CHECK(f.steps_gained == 60);
  CHECK(f.time["goodput"].get<double>() == doctest::Approx(800.0 / 931));
  const auto early = fake_facts(fake_journal(), 0, 1005);  // the report made before the first submission
  CHECK(early.attempts.empty());
  const auto none = fake_facts(fake_journal(), 1950, 2000);  // after the campaign ended
  CHECK(none.attempts.empty());
  CHECK(none.state == "completed");
}

TEST_CASE("report facts: an attempt still running ends at the report's time, at status's step, and says so now") {
  const auto f = fake_facts(fake_journal(1330), 0, 1500, 50, "RUNNING");
  REQUIRE(f.attempts.size() == 2);
  const auto& b = f.attempts[1];
  CHECK(b.open);
  CHECK(b.ending == "running");
  CHECK(b.action.empty());
  CHECK(b.end == 1500);
  CHECK(b.to_step == 50);
  CHECK(b.kept == 30);
  CHECK(f.step == 50);
  CHECK(f.now == "running: attempt 2, job 102 RUNNING, step 50");
  CHECK(fake_facts(fake_journal(1330), 0, 1500, 20, "PENDING").attempts[1].ending == "pending");
  const auto decided = fake_facts(fake_journal(1320), 0, 1500);  // decided, not yet submitted
  CHECK(decided.attempts[1].ending == "not_submitted");
  CHECK(decided.now == "running: attempt 2, not submitted yet");
  const auto between = fake_facts(fake_journal(1310), 0, 1500);  // ended, the next not yet decided
  CHECK(between.now == "running: attempt 1 ended failed; the next is to be submitted");
}

TEST_CASE("report facts: a run a set holds back has no attempt, and its gate is what runs now") {
  const auto f = fake_facts({}, 0, 1500, -1, "", "second", "waiting after first (running)");
  CHECK(f.attempts.empty());
  CHECK(f.step == -1);
  CHECK(f.now == "not started: waiting after first (running)");
  CHECK(f.time["goodput"].is_null());
}

TEST_CASE("report facts: the JSON holds the window and every fact") {
  report::Report r{.window = {0, 2000}, .runs = {fake_facts(fake_journal(), 0, 2000)}};
  const auto j = report::to_json(r);
  CHECK(j["since"] == 0);
  CHECK(j["until"] == 2000);
  const auto& run = j["runs"][0];
  CHECK(run["run"] == "t");
  CHECK(run["config"] == "night.yaml:t");
  CHECK(run["steps_gained"] == 80);
  CHECK(run["failures"] == 1);
  CHECK(run["time"]["goodput"].is_number());
  CHECK(run["attempts"].size() == 2);
  CHECK(run["attempts"][0]["ending"] == "failed");
  CHECK(run["attempts"][0]["job_id"] == 101);
  CHECK(run["attempts"][1]["to_step"] == 80);
  CHECK(run["exclusions"][0]["node"] == "n1");
  CHECK(run["exclusions"][0]["attempt"] == 1);
}

TEST_CASE("report facts: an attempt whose failure an evidence rule explained names the rule and quotes its line") {
  auto journal = fake_journal();
  for (auto& r : journal)
    if (r.type == "ended" && r.data["attempt"] == 1) {
      r.data["evidence_rule"] = "nccl_connect";
      r.data["evidence_quote"] = "NCCL WARN socketStartConnect: Connect to n2<4567> failed : Connection refused";
    }
  const auto f = fake_facts(journal, 0, 2000);
  REQUIRE(f.attempts.size() == 2);
  CHECK(f.attempts[0].evidence_rule == "nccl_connect");
  CHECK(f.attempts[1].evidence_rule.empty());
  report::Report r{.window = {0, 2000}, .runs = {f}};
  const auto j = report::to_json(r);
  CHECK(j["runs"][0]["attempts"][0]["evidence_quote"] ==
        "NCCL WARN socketStartConnect: Connect to n2<4567> failed : Connection refused");
  CHECK_FALSE(j["runs"][0]["attempts"][1].contains("evidence_rule"));
}
