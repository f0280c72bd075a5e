#include "decide/signal_lead.h"

#include <algorithm>
#include <cmath>

namespace mlsup::decide {

std::optional<double> needed_lead(std::optional<double> save_p95, std::optional<double> step_p95) {
  if (!save_p95) return std::nullopt;
  return *save_p95 + step_p95.value_or(0);
}

std::optional<long long> auto_lead(std::optional<double> save_p95, std::optional<double> step_p95, long long time_limit) {
  const auto needed = needed_lead(save_p95, step_p95);
  if (!needed) return std::nullopt;
  auto lead = static_cast<long long>(std::ceil(1.5 * *needed)) + 60;
  if (time_limit > 0) lead = std::min(lead, time_limit / 2);
  return std::max(lead, 1LL);
}

}  // namespace mlsup::decide
