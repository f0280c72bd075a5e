#include "decide/stop_wait.h"

#include <algorithm>

namespace mlsup::decide {

double stop_grace(double configured, std::optional<double> save_p95) {
  return save_p95 ? std::max(configured, 2 * *save_p95) : configured;
}

bool stop_overdue(const StopWait& w, double now) {
  if (now < w.switch_set_at + w.grace) return false;
  return w.saving_for < 0 || w.saving_for >= w.save_timeout;  // a save under way is waited for, up to its timeout
}

}  // namespace mlsup::decide
