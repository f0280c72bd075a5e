#include "decide/submit_retry.h"

#include <algorithm>
#include <cmath>

#include "config/duration.h"

namespace mlsup::decide {
namespace {

// What a kind of failure allows: another try, and giving up once policy.submit_retry_for has passed;
// and whether the job may exist all the same (Slurm did not say no: the request may have been committed).
struct KindRule {
  slurm::ErrorKind kind;
  bool retry;
  bool gives_up;
  bool unknown;
  const char* why;  // why it is retried (or not)
};

constexpr KindRule kKindRules[] = {
    {slurm::ErrorKind::Unreachable, true, false, true, "the controller did not answer"},
    {slurm::ErrorKind::Timeout, true, false, true, "sbatch or the controller took too long"},
    {slurm::ErrorKind::Busy, true, false, false, "the controller asked to come back later"},
    {slurm::ErrorKind::OverLimit, true, true, false, "an accounting/QOS limit, often a submit limit that lifts as jobs end"},
    {slurm::ErrorKind::Other, true, true, true, "an error Slurm does not explain"},
    {slurm::ErrorKind::Rejected, false, true, false, "the request is wrong"},
    {slurm::ErrorKind::PermissionDenied, false, true, false, "the user may not submit it"},
    {slurm::ErrorKind::UnknownJob, false, true, false, "Slurm answered about an unknown job"},
};

const KindRule& rule_for(slurm::ErrorKind kind) {
  for (const auto& r : kKindRules)
    if (r.kind == kind) return r;
  return kKindRules[4];  // every kind has a row; this is Other's
}

double backoff(const config::Config& c, std::size_t failures) {
  const double initial = static_cast<double>(c.policy.backoff_initial.count());
  const double delay = initial * std::pow(2.0, static_cast<double>(failures) - 1);
  return std::min(delay, static_cast<double>(c.policy.backoff_max.count()));
}

std::string duration(double seconds) { return config::format_duration(config::Seconds(std::llround(seconds))); }

}  // namespace

bool outcome_unknown(slurm::ErrorKind kind) { return rule_for(kind).unknown; }

SubmitRetry submit_retry(const std::vector<SubmitFailure>& failures, const config::Config& config, double now) {
  if (failures.empty()) return {SubmitStep::Try, now, false, "no submission has failed"};
  const SubmitFailure& last = failures.back();
  const KindRule& rule = rule_for(last.kind);
  if (!rule.retry) return {SubmitStep::Stop, 0, false, "Slurm refused the job: " + last.message};
  const double first = failures.front().time;
  const double window = static_cast<double>(config.policy.submit_retry_for.count());
  const std::string tries = std::to_string(failures.size()) + (failures.size() == 1 ? " try" : " tries");
  if (rule.gives_up && last.time - first >= window)
    return {SubmitStep::Stop, 0, false,
            "sbatch failed for " + duration(last.time - first) + " (" + tries + ", policy.submit_retry_for is " +
                config::format_duration(config.policy.submit_retry_for) + "); Slurm said: " + last.message};
  double next = last.time + backoff(config, failures.size());
  if (rule.gives_up) next = std::min(next, first + window);  // the last try comes when the time is up
  if (rule.unknown) next = std::max(next, last.time + static_cast<double>(config.policy.submit_unknown_grace.count()));
  return {now >= next ? SubmitStep::Try : SubmitStep::Wait, next, failures.size() == kSubmitAlertAfter,
          std::string(rule.why) + ": " + tries + " so far, the next in " + duration(std::max(0.0, next - last.time))};
}

}  // namespace mlsup::decide
