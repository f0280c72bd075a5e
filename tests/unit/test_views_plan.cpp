// `mlsup plan`'s figures (views/plan_view.h) from a journal with a known failure and a known pace: the
// measured inputs as the journal and memory give them, and the Young/Daly interval, goodput and wall time
// they make.
#include <doctest/doctest.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "state/lifecycle.h"
#include "views/plan_view.h"

using namespace mlsup;
using doctest::Approx;

namespace {

// A campaign whose attempt 1 stepped from 1060 to 4600 and failed at 4610 (step 3600, one node blamed), and whose
// attempt 2 resumes from step 3000 (submitted at 4620) and runs at 8300.
std::vector<engine::JournalRecord> one_failure() {
  return {
      {1000, "campaign", {{"id", "c1"}}},
      {1000, "submit-intent", {{"attempt", 1}, {"tag", "mlsup:t:c1:1"}, {"resume_from", ""}, {"resume_step", 0}}},
      {1010, "submitted", {{"attempt", 1}, {"job_id", 101}}},
      {4610, "ended", {{"attempt", 1}, {"job_id", 101}, {"class", "failed"}, {"step", 3600}, {"nodes", "n1"},
                       {"action", "resubmit"}, {"reason", "the training failed"}, {"first_step_at", 1060},
                       {"last_progress_at", 4600}}},
      {4610, "submit-intent", {{"attempt", 2}, {"tag", "mlsup:t:c1:2"}, {"resume_from", "ck/step-3000"}, {"resume_step", 3000}}},
      {4620, "submitted", {{"attempt", 2}, {"job_id", 102}}},
  };
}

}  // namespace

TEST_CASE("plan: a journal with one failure, 20 s saves, 1 s steps and a checkpoint every 1000 steps") {
  config::Config c;
  c.name = std::string(1, 't');
  c.target_steps = 10000;
  c.slurm.nodes = 4;
  c.slurm.time_limit = config::Seconds{4 * 3600};
  c.slurm.signal_lead = {config::Seconds{300}, false};
  const auto records = one_failure();
  const auto s = engine::replay(records);
  engine::Memory m;
  m.pace.steps = std::vector<double>(30, 1.0);
  m.pace.saves = {20, 20, 20};
  engine::DiskFacts disk;
  disk.checkpoint_steps = {1000, 2000, 3000};
  const engine::Clocks now{8300, 8300, "c"};

  const auto p = engine::plan_json({c, s, m, disk, std::nullopt, now});
  const auto& in = p["inputs"];
  // Running time: attempt 1 from its first step to its end (3550 s), attempt 2 (its steps' times unknown) from its
  // submission to now (3680 s); one failure.
  CHECK(in["mtbf"]["failures"] == 1);
  CHECK(in["mtbf"]["source"] == "campaign");
  CHECK(in["mtbf"]["exposure"].get<double>() == Approx(3550 + 3680));
  CHECK(in["mtbf"]["seconds"].get<double>() == Approx(7230));
  CHECK(in["save_seconds"].get<double>() == 20);
  CHECK(in["save_every_steps"] == 1000);
  CHECK(in["interval"].get<double>() == Approx(1000));
  CHECK(in["restart"]["source"] == "assumed");  // the next attempt's first step is not known
  CHECK(in["steps_left"] == 7000);
  CHECK(p["advised"]["interval"].get<double>() == Approx(std::sqrt(2 * 20 * 7230.0)));
  CHECK(p["advised"]["every_steps"] == 538);
  const double now_goodput = 1000.0 / 1020 * (1 - (300 + 510.0) / 7230);
  CHECK(p["goodput"]["current"].get<double>() == Approx(now_goodput));
  CHECK(p["goodput"]["advised"].get<double>() > now_goodput);
  CHECK(p["to_target"]["current"]["wall"].get<double>() == Approx(7000 / now_goodput));
  CHECK(p["to_target"]["current"]["node_hours"].get<double>() == Approx(7000 / now_goodput / 3600 * 4));
  // The rest (about 2h10m advised) fits in a shorter limit than the 4 h configured.
  CHECK(p["time_limit"]["advised"].get<long long>() < 4 * 3600);
  CHECK(p["signal_lead"]["advised"].is_number());
  bool says_interval = false;
  for (const auto& a : p["advice"]) says_interval |= a.get<std::string>().find("save every 538 steps") != std::string::npos;
  CHECK(says_interval);

  SUBCASE("--mtbf replaces the campaign's failures") {
    const auto given = engine::plan_json({c, s, m, disk, 6 * 3600.0, now});
    CHECK(given["inputs"]["mtbf"]["source"] == "given");
    CHECK(given["advised"]["interval"].get<double>() == Approx(std::sqrt(2 * 20 * 6 * 3600.0)));
  }
  SUBCASE("no save measured: no interval advice, and the advice says why") {
    m.pace.saves.clear();
    const auto none = engine::plan_json({c, s, m, disk, std::nullopt, now});
    CHECK(none["advised"]["interval"].is_null());
    CHECK(none["goodput"]["current"].is_null());
    CHECK(none["advice"][0].get<std::string>().find("no save measured") != std::string::npos);
  }
}

namespace {

// A campaign whose attempt 1 was submitted at 1010 and runs, with no failure yet.
std::vector<engine::JournalRecord> no_failure() {
  return {
      {1000, "campaign", {{"id", "c1"}}},
      {1000, "submit-intent", {{"attempt", 1}, {"tag", "mlsup:t:c1:1"}, {"resume_from", ""}, {"resume_step", 0}}},
      {1010, "submitted", {{"attempt", 1}, {"job_id", 101}}},
  };
}

// True when one of the plan's advice sentences holds text.
bool advises(const nlohmann::json& plan, const std::string& text) {
  for (const auto& a : plan["advice"])
    if (a.get<std::string>().find(text) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("plan: the MTBF's sources in order: --mtbf, the campaign's failures, the cluster's accounting, a lower bound") {
  config::Config c;
  c.name = "t";
  c.target_steps = 10000;
  c.slurm.nodes = 4;
  engine::Memory m;
  m.pace.steps = std::vector<double>(30, 1.0);
  m.pace.saves = {20, 20, 20};
  engine::DiskFacts disk;
  disk.checkpoint_steps = {1000, 2000, 3000};
  const engine::Clocks now{8300, 8300, "c"};
  const auto quiet = no_failure();
  const auto quiet_state = engine::replay(quiet);
  const slurm::NodeFailureHistory four{.available = true, .node_seconds = 400 * 3600.0, .node_failures = 4};

  SUBCASE("no failure in the journal: 4 node failures in 400 node-hours give a 4-node job 25 h") {
    engine::PlanInputs in{c, quiet_state, m, disk, std::nullopt, now, four};
    CHECK(engine::wants_history(in));
    const auto p = engine::plan_json(in);
    const auto& mtbf = p["inputs"]["mtbf"];
    CHECK(mtbf["source"] == "accounting");
    CHECK(mtbf["seconds"].get<double>() == Approx(25 * 3600.0));
    CHECK(mtbf["lower_bound"] == false);
    CHECK(mtbf["node_failures"] == 4);
    CHECK(mtbf["node_seconds"].get<double>() == Approx(400 * 3600.0));
    CHECK_FALSE(mtbf.contains("accounting_error"));
    CHECK(p["advised"]["interval"].get<double>() == Approx(std::sqrt(2 * 20 * 25 * 3600.0)));
    CHECK(engine::plan_text(p).find("MTBF 1d01h (accounting: 4 node failure(s) in 400 node-hours") != std::string::npos);
  }
  SUBCASE("without slurm.nodes the job is one node wide") {
    c.slurm.nodes.reset();
    const auto p = engine::plan_json({c, quiet_state, m, disk, std::nullopt, now, four});
    CHECK(p["inputs"]["mtbf"]["seconds"].get<double>() == Approx(100 * 3600.0));
  }
  SUBCASE("a campaign failure wins over the accounting") {
    const auto records = one_failure();
    const auto s = engine::replay(records);
    engine::PlanInputs in{c, s, m, disk, std::nullopt, now, four};
    CHECK_FALSE(engine::wants_history(in));
    const auto p = engine::plan_json(in);
    CHECK(p["inputs"]["mtbf"]["source"] == "campaign");
    CHECK(p["inputs"]["mtbf"]["seconds"].get<double>() == Approx(7230));
  }
  SUBCASE("--mtbf wins over both, and the accounting is not wanted") {
    engine::PlanInputs in{c, quiet_state, m, disk, 6 * 3600.0, now, four};
    CHECK_FALSE(engine::wants_history(in));
    const auto p = engine::plan_json(in);
    CHECK(p["inputs"]["mtbf"]["source"] == "given");
    CHECK_FALSE(p["inputs"]["mtbf"].contains("node_failures"));
  }
  SUBCASE("a history without node failures leaves the campaign's lower bound, and the advice says so") {
    const slurm::NodeFailureHistory none{.available = true, .node_seconds = 50 * 3600.0, .node_failures = 0};
    const auto p = engine::plan_json({c, quiet_state, m, disk, std::nullopt, now, none});
    const auto& mtbf = p["inputs"]["mtbf"];
    CHECK(mtbf["source"] == "campaign");
    CHECK(mtbf["lower_bound"] == true);
    CHECK(mtbf["seconds"].get<double>() == Approx(8300 - 1010));
    CHECK(mtbf["node_failures"] == 0);
    CHECK(advises(p, "the cluster's accounting has no node failure either, in 50 node-hours"));
  }
  SUBCASE("a site without accounting, or one that did not answer: the lower bound, and why") {
    const auto off = engine::plan_json({c, quiet_state, m, disk, std::nullopt, now, slurm::NodeFailureHistory{}});
    CHECK(off["inputs"]["mtbf"]["source"] == "campaign");
    CHECK(off["inputs"]["mtbf"]["accounting_error"] == "the site keeps no accounting");
    engine::PlanInputs in{c, quiet_state, m, disk, std::nullopt, now};
    in.accounting_error = "Slurm did not answer within 5s";
    const auto late = engine::plan_json(in);
    CHECK(late["inputs"]["mtbf"]["lower_bound"] == true);
    CHECK(late["inputs"]["mtbf"]["accounting_error"] == "Slurm did not answer within 5s");
    CHECK(advises(late, "the cluster's accounting was not read: Slurm did not answer within 5s"));
    CHECK(engine::plan_text(late).find("cluster history unused (the cluster's accounting was not read: Slurm did not answer") !=
          std::string::npos);
  }
  SUBCASE("not asked (the report's plan): no accounting fields") {
    const auto p = engine::plan_json({c, quiet_state, m, disk, std::nullopt, now});
    CHECK(p["inputs"]["mtbf"]["lower_bound"] == true);
    CHECK_FALSE(p["inputs"]["mtbf"].contains("accounting_error"));
    CHECK_FALSE(p["inputs"]["mtbf"].contains("node_failures"));
  }
}
