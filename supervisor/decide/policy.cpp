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

// The restarts at the end of history that made no progress, plus this one (a job Slurm refused to
// start ran nothing: it neither counts nor breaks the run).
int stalled_in_a_row(bool progressed, const std::vector<Restart>& history) {
  if (progressed) return 0;
  int n = 1;
  for (auto it = history.rbegin(); it != history.rend() && !it->progressed && !it->fell_back; ++it)
    if (it->cls != EndClass::Refused) ++n;
  return n;
}

// A class without a budget (refused): resubmitted after a growing delay until the refusals in a row
// have lasted policy.submit_retry_for, then the campaign stops (14).
Decision bounded_in_time(const Rule& rule, const std::vector<Restart>& history, const config::Config& c, double now) {
  double first = now;
  int in_a_row = 1;
  for (auto it = history.rbegin(); it != history.rend() && it->cls == rule.cls; ++it, ++in_a_row) first = it->time;
  const auto limit = c.policy.submit_retry_for;
  if (now - first >= static_cast<double>(limit.count()))
    return {Action::Stop, kCannotGoOn, 0,
            std::string(rule.reason) + ", again and again for " + config::format_duration(limit) +
                " (policy.submit_retry_for): what the job asks cannot be had on this cluster now"};
  const double initial = static_cast<double>(c.policy.backoff_initial.count());
  const double delay = std::min(initial * std::pow(2.0, in_a_row - 1), static_cast<double>(c.policy.backoff_max.count()));
  return {Action::Resubmit, 0, delay, std::string(rule.reason) + "; submitted again (no restart budget is spent)"};
}

// An ending that waiting may help: a class that backs off, with neither progress nor a new exclusion.
bool fruitless(EndClass cls, bool progressed, bool new_exclusion) {
  return rule_for(cls).backoff && !progressed && !new_exclusion;
}

// Fruitless endings in a row at the end of history, this one included.
int fruitless_in_a_row(const std::vector<Restart>& history) {
  int n = 1;
  for (auto it = history.rbegin();
       it != history.rend() && !it->fell_back && fruitless(it->cls, it->progressed, it->new_exclusion); ++it)
    ++n;
  return n;
}

double backoff(const config::Config& c, const std::vector<Restart>& history) {
  const double initial = static_cast<double>(c.policy.backoff_initial.count());
  const double delay = initial * std::pow(2.0, fruitless_in_a_row(history) - 1);
  return std::min(delay, static_cast<double>(c.policy.backoff_max.count()));
}

// Why a class that backs off goes on at once.
std::string at_once(bool progressed) {
  return progressed ? "; resubmitted at once: the attempt saved a newer checkpoint"
                    : "; resubmitted at once: a node was excluded for it";
}

}  // namespace

Decision decide(EndClass cls, bool progressed, const std::vector<Restart>& history, const config::Config& config,
                double now, bool new_exclusion) {
  const Rule& rule = rule_for(cls);
  if (rule.action != Action::Resubmit) return {rule.action, rule.exit_code, 0, std::string(rule.reason)};
  if (rule.budget.empty()) return bounded_in_time(rule, history, config, now);
  if (const auto use = budget_use(cls, history, config, now); use && use->used > use->count) {
    return {Action::Stop, kBudgetSpent, 0,
            std::string(rule.reason) + ", and the " + use->budget + " budget (" + std::to_string(use->count) + " per " +
                config::format_duration(use->window) + ") is spent"};
  }
  const int stalled = stalled_in_a_row(progressed, history);
  if (stalled >= config.policy.crash_loop_restarts) {
    return {Action::Stop, kBudgetSpent, 0,
            std::string(rule.reason) + "; " + std::to_string(stalled) +
                " attempts in a row made no step progress: a crash loop, stopping instead of burning the allocation"};
  }
  if (fruitless(cls, progressed, new_exclusion))
    return {Action::Resubmit, 0, backoff(config, history), std::string(rule.reason)};
  return {Action::Resubmit, 0, 0.0, std::string(rule.reason) + (rule.backoff ? at_once(progressed) : "")};
}

std::optional<BudgetUse> budget_use(EndClass cls, const std::vector<Restart>& history, const config::Config& config,
                                    double now) {
  const Rule& rule = rule_for(cls);
  if (rule.action != Action::Resubmit || rule.budget.empty()) return std::nullopt;
  const config::Budget& budget = config.policy.budgets.at(std::string(rule.budget));
  if (budget.count < 0) return std::nullopt;
  return BudgetUse{std::string(rule.budget), used(rule, history, budget, now) + 1, budget.count, budget.window};
}

void compact_restarts(std::vector<Restart>& history, std::vector<RestartCount>& earlier, double now, double horizon) {
  const auto progressed = std::find_if(history.rbegin(), history.rend(),
                                       [](const Restart& r) { return r.progressed && !rule_for(r.cls).budget.empty(); });
  const auto boundary = progressed == history.rend() ? history.begin() : progressed.base() - 1;  // the newest that progressed
  const auto end = std::find_if(history.begin(), boundary, [&](const Restart& r) { return r.time >= now - horizon; });
  if (end == history.begin()) return;
  for (auto it = history.begin(); it != end; ++it) {
    auto c = std::find_if(earlier.begin(), earlier.end(), [&](const RestartCount& e) { return e.cls == it->cls; });
    if (c == earlier.end()) c = earlier.insert(earlier.end(), RestartCount{it->cls, 0});
    ++c->count;
  }
  history.erase(history.begin(), end);
}

double restart_horizon(const config::Config& c) {
  double longest = 7 * 86400.0;
  for (const auto& [name, budget] : c.policy.budgets)
    longest = std::max(longest, static_cast<double>(budget.window.count()));
  return longest;
}

bool nearly_spent(const BudgetUse& use, int percent) {
  return use.count > 0 && static_cast<long long>(use.used) * 100 >= static_cast<long long>(percent) * use.count;
}

}  // namespace mlsup::decide
