#pragma once
// A fake journal for the report's tests: a campaign whose first attempt fails at step 30 (its node excluded)
// and whose second resumes from step 20 and completes at step 80, each record at a known wall time.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "state/lifecycle.h"
#include "state/state.h"
#include "report/facts.h"

namespace mlsup::test {

// The records up to (and including) those at wall time until.
inline std::vector<engine::JournalRecord> fake_journal(double until = 1e9) {
  using nlohmann::json;
  const std::vector<engine::JournalRecord> all = {
      {1000, "campaign", {{"id", "c1"}}},
      {1000, "submit-intent", {{"attempt", 1}, {"tag", "mlsup:t:c1:1"}, {"resume_from", ""}, {"resume_step", 0}}},
      {1010, "submitted", {{"attempt", 1}, {"job_id", 101}}},
      {1310, "ended", {{"attempt", 1}, {"job_id", 101}, {"class", "failed"}, {"step", 30}, {"nodes", "n1"},
                       {"action", "resubmit"}, {"reason", "the training failed"}}},
      {1310, "exclude", {{"attempt", 1}, {"node", "n1"}, {"reason", "first failing task | exit 1"}, {"until", 5000}}},
      {1320, "submit-intent", {{"attempt", 2}, {"tag", "mlsup:t:c1:2"}, {"resume_from", "ck/step-20"}, {"resume_step", 20}}},
      {1330, "submitted", {{"attempt", 2}, {"job_id", 102}}},
      {1930, "ended", {{"attempt", 2}, {"job_id", 102}, {"class", "completed"}, {"step", 80}, {"nodes", "n2"},
                       {"action", "finish"}, {"reason", "the training completed"}}},
      {1931, "finished", {{"code", 0}, {"reason", "the training completed"}}},
  };
  std::vector<engine::JournalRecord> out;
  for (const auto& r : all)
    if (r.time <= until) out.push_back(r);
  return out;
}

// The facts of a run named name with those records over [since, until].
inline report::RunFacts fake_facts(const std::vector<engine::JournalRecord>& records, double since, double until,
                                   long long step = -1, const std::string& job_state = "", const std::string& name = "t",
                                   const std::string& gate = "") {
  const auto s = engine::replay(records);
  return report::run_facts({.run = name, .config = "night.yaml:" + name, .state = s, .records = records,
                            .current_step = step, .state_name = engine::state_name(s), .job_state = job_state,
                            .gate = gate},
                           {since, until});
}

}  // namespace mlsup::test
