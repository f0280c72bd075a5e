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

  const auto p = engine::plan_json({c, s, records, m, disk, std::nullopt, now});
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
    const auto given = engine::plan_json({c, s, records, m, disk, 6 * 3600.0, now});
    CHECK(given["inputs"]["mtbf"]["source"] == "given");
    CHECK(given["advised"]["interval"].get<double>() == Approx(std::sqrt(2 * 20 * 6 * 3600.0)));
  }
  SUBCASE("no save measured: no interval advice, and the advice says why") {
    m.pace.saves.clear();
    const auto none = engine::plan_json({c, s, records, m, disk, std::nullopt, now});
    CHECK(none["advised"]["interval"].is_null());
    CHECK(none["goodput"]["current"].is_null());
    CHECK(none["advice"][0].get<std::string>().find("no save measured") != std::string::npos);
  }
}
