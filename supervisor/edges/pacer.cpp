#include "edges/pacer.h"

#include <algorithm>

namespace mlsup::edges {

Pacer::Pacer(double per_second, int burst, std::function<double()> now, std::function<void(double)> sleep)
    : interval_(1.0 / per_second),
      tolerance_(static_cast<double>(std::max(burst, 1) - 1) / per_second),
      now_(std::move(now)),
      sleep_(std::move(sleep)) {}

double Pacer::reserve() {
  std::lock_guard lock(mutex_);
  const double t = now_();
  const double due = std::max(next_, t);
  const double go = std::max(t, due - tolerance_);
  next_ = due + interval_;
  return go - t;
}

double Pacer::wait() {
  const double waited = reserve();
  if (waited > 0) sleep_(waited);
  return waited;
}

}  // namespace mlsup::edges
