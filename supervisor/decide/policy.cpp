#include "decide/policy.h"

#include <algorithm>
#include <cmath>

#include "config/duration.h"

namespace mlsup::decide {
namespace {

using Rule = ClassRow;

const Rule& rule_for(EndClass cls) { return row(cls); }

// Restarts of the same budget within its window, the one being decided not counted.
int used(const Rule& rule, const std::vector<Restart>& history, const config::Budget& budget, double now) {
  return static_cast<int>(std::count_if(history.begin(), history.end(), [&](const Restart& r) {
    return rule_for(r.cls).budget == rule.budget &&
           now - r.time < static_cast<double>(budget.window.count());
  }));
}

// The restarts at the end of history that made no progress, plus this one.
int stalled_in_a_row(bool progressed, const std::vector<Restart>& history) {
  if (progressed) return 0;
  int n = 1;
  for (auto it = history.rbegin(); it != history.rend() && !it->progressed; ++it) ++n;
  return n;
}

// Failures in a row (with backoff) at the end of history, this one included.
int failures_in_a_row(const std::vector<Restart>& history) {
  int n = 1;
  for (auto it = history.rbegin(); it != history.rend() && rule_for(it->cls).backoff; ++it) ++n;
  return n;
}

double backoff(const config::Config& c, const std::vector<Restart>& history) {
  const double initial = static_cast<double>(c.policy.backoff_initial.count());
  const double delay = initial * std::pow(2.0, failures_in_a_row(history) - 1);
  return std::min(delay, static_cast<double>(c.policy.backoff_max.count()));
}

}  // namespace

Decision decide(EndClass cls, bool progressed, const std::vector<Restart>& history, const config::Config& config,
                double now) {
  const Rule& rule = rule_for(cls);
  if (rule.action != Action::Resubmit) return {rule.action, rule.exit_code, 0, std::string(rule.reason)};
  const config::Budget& budget = config.policy.budgets.at(std::string(rule.budget));
  if (budget.count >= 0 && used(rule, history, budget, now) >= budget.count) {
    return {Action::Stop, kBudgetSpent, 0,
            std::string(rule.reason) + ", and the " + std::string(rule.budget) + " budget (" + std::to_string(budget.count) + " per " +
                config::format_duration(budget.window) + ") is spent"};
  }
  const int stalled = stalled_in_a_row(progressed, history);
  if (stalled >= config.policy.crash_loop_restarts) {
    return {Action::Stop, kBudgetSpent, 0,
            std::string(rule.reason) + "; " + std::to_string(stalled) +
                " attempts in a row made no step progress: a crash loop, stopping instead of burning the allocation"};
  }
  return {Action::Resubmit, 0, rule.backoff ? backoff(config, history) : 0.0, std::string(rule.reason)};
}

}  // namespace mlsup::decide
