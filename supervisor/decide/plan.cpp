#include "decide/plan.h"

#include <algorithm>
#include <cmath>

namespace mlsup::decide {

double young_daly_interval(double save, double mtbf) { return std::sqrt(2.0 * std::max(0.0, save) * std::max(0.0, mtbf)); }

double expected_goodput(double interval, double save, std::optional<double> mtbf, double restart) {
  if (interval <= 0) return 0;
  const double cycle = interval + std::max(0.0, save);
  const double saving_share = interval / cycle;
  if (!mtbf || *mtbf <= 0) return saving_share;
  const double failure_share = (std::max(0.0, restart) + cycle / 2) / *mtbf;
  return std::clamp(saving_share * (1 - failure_share), 0.0, 1.0);
}

std::optional<long long> save_every_steps(const std::vector<long long>& checkpoint_steps) {
  std::vector<long long> gaps;
  for (std::size_t i = 1; i < checkpoint_steps.size(); ++i)
    if (checkpoint_steps[i] > checkpoint_steps[i - 1]) gaps.push_back(checkpoint_steps[i] - checkpoint_steps[i - 1]);
  if (gaps.empty()) return std::nullopt;
  std::sort(gaps.begin(), gaps.end());
  return gaps[(gaps.size() - 1) / 2];  // the lower median: a step distance that occurred
}

std::optional<double> save_interval(const std::vector<long long>& checkpoint_steps, std::optional<double> step_seconds) {
  const auto every = save_every_steps(checkpoint_steps);
  if (!every || !step_seconds || *step_seconds <= 0) return std::nullopt;
  return static_cast<double>(*every) * *step_seconds;
}

std::optional<Mtbf> mtbf_from(double exposure, int failures) {
  if (exposure <= 0) return std::nullopt;
  if (failures <= 0) return Mtbf{exposure, true};
  return Mtbf{exposure / failures, false};
}

std::optional<double> wall_to_steps(long long steps, std::optional<double> step_seconds, double goodput) {
  if (!step_seconds || goodput <= 0) return std::nullopt;
  return static_cast<double>(std::max(0LL, steps)) * *step_seconds / goodput;
}

long long fitting_time_limit(double wall_left, long long signal_lead) {
  const double wanted = std::max(0.0, wall_left) * 1.1 + static_cast<double>(std::max(0LL, signal_lead));
  const auto tens = static_cast<long long>(std::ceil(wanted / 600.0));
  return std::max(1LL, tens) * 600;
}

long long time_limits_left(double wall_left, long long limit, long long lead) {
  const long long usable = limit - lead;
  if (limit <= 0 || usable <= 0 || wall_left <= 0) return 0;
  return static_cast<long long>(std::ceil(wall_left / static_cast<double>(usable))) - 1;
}

}  // namespace mlsup::decide
