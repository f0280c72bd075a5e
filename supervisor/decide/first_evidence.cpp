#include "decide/first_evidence.h"

#include <algorithm>
#include <functional>

namespace mlsup::decide {

bool matches(const TrainingFault& fault, const FirstEnd& e) {
  const long long gap = fault.step > e.step ? fault.step - e.step : e.step - fault.step;
  return fault.rank == e.rank && gap <= fault.tolerance;
}

FirstEvidence weigh_first_end(const FirstEnd& end, const std::vector<TrainingFault>& known,
                              const std::vector<RuleExclusion>& made, const std::vector<Exclusion>& ledger, double now,
                              long long interval) {
  FirstEvidence out;
  if (std::any_of(known.begin(), known.end(), [&](const TrainingFault& f) { return matches(f, end); })) {
    out.follows_training = true;
    return out;
  }
  const TrainingFault candidate{end.rank, end.step, interval};
  for (const auto& m : made) {
    const bool live = m.entry < ledger.size() && ledger[m.entry].until > now;
    if (live && m.failure.node != end.node && matches(candidate, m.failure)) out.lift.push_back(m.failure.node);
  }
  std::sort(out.lift.begin(), out.lift.end());
  out.lift.erase(std::unique(out.lift.begin(), out.lift.end()), out.lift.end());
  if (out.lift.empty()) {
    out.apply = true;
    return out;
  }
  out.follows_training = true;
  out.found = candidate;
  return out;
}

long long step_interval(std::vector<long long> steps) {
  std::sort(steps.begin(), steps.end(), std::greater<>());
  steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
  return steps.size() < 2 ? 0 : steps[0] - steps[1];
}

}  // namespace mlsup::decide
