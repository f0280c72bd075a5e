#include "decide/policy.h"

#include <algorithm>
#include <cmath>

#include "config/duration.h"

namespace mlsup::decide {
namespace {

// One row of the policy table.
struct Rule {
  EndClass cls;
  Action action;
  int exit_code;          // Finish/Stop
  const char* budget;     // Resubmit: the budget it draws on
  bool backoff;           // Resubmit: wait before resubmitting
  const char* reason;
};

constexpr Rule kRules[] = {
    {EndClass::Completed, Action::Finish, kCompleted, nullptr, false, "the training completed"},
    {EndClass::KillSwitch, Action::Stop, kStoppedBySwitch, nullptr, false, "the kill switch was set: the training saved and stopped"},
    {EndClass::NoRetry, Action::Stop, kNoRetry, nullptr, false, "the training exited with the do-not-retry code"},
    {EndClass::Deadline, Action::Stop, kCannotGoOn, nullptr, false, "the job passed its deadline"},
    {EndClass::CancelledByPerson, Action::Stop, kCancelledByPerson, nullptr, false, "the job was cancelled, not by mlsup"},
    {EndClass::PlannedExit, Action::Resubmit, 0, "planned_exit", false, "the training exited cleanly short of its target"},
    {EndClass::Timeout, Action::Resubmit, 0, "timeout", false, "the job reached its time limit"},
    {EndClass::Preempted, Action::Resubmit, 0, "preempted", false, "the job was preempted"},
    {EndClass::Failed, Action::Resubmit, 0, "failed", true, "the training failed"},
    {EndClass::NodeFail, Action::Resubmit, 0, "node_fail", true, "a node of the job failed"},
    {EndClass::OutOfMemory, Action::Resubmit, 0, "out_of_memory", true, "the job ran out of memory"},
    {EndClass::BootFail, Action::Resubmit, 0, "boot_fail", true, "a node of the job failed to boot"},
    {EndClass::Hang, Action::Resubmit, 0, "hang", true, "the training hung (no heartbeat)"},
    {EndClass::Lost, Action::Resubmit, 0, "failed", true, "Slurm forgot the job before its end was seen"},
};

const Rule& rule_for(EndClass cls) {
  for (const auto& r : kRules)
    if (r.cls == cls) return r;
  return kRules[0];
}

// Restarts of the same budget within its window, the one being decided not counted.
int used(const Rule& rule, const std::vector<Restart>& history, const config::Budget& budget, double now) {
  return static_cast<int>(std::count_if(history.begin(), history.end(), [&](const Restart& r) {
    return std::string(rule_for(r.cls).budget ? rule_for(r.cls).budget : "") == rule.budget &&
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
  if (rule.action != Action::Resubmit) return {rule.action, rule.exit_code, 0, rule.reason};
  const config::Budget& budget = config.policy.budgets.at(rule.budget);
  if (budget.count >= 0 && used(rule, history, budget, now) >= budget.count) {
    return {Action::Stop, kBudgetSpent, 0,
            std::string(rule.reason) + ", and the " + rule.budget + " budget (" + std::to_string(budget.count) + " per " +
                config::format_duration(budget.window) + ") is spent"};
  }
  const int stalled = stalled_in_a_row(progressed, history);
  if (stalled >= config.policy.crash_loop_restarts) {
    return {Action::Stop, kBudgetSpent, 0,
            std::string(rule.reason) + "; " + std::to_string(stalled) +
                " attempts in a row made no step progress: a crash loop, stopping instead of burning the allocation"};
  }
  return {Action::Resubmit, 0, rule.backoff ? backoff(config, history) : 0.0, rule.reason};
}

}  // namespace mlsup::decide
