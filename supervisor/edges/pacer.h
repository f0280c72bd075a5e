#pragma once
// Spaces calls out at a rate: a burst at once, then one every 1/rate seconds (a token bucket in its
// theoretical-arrival-time form). Thread-safe: each caller reserves its turn, then waits outside the lock.
#include <functional>
#include <mutex>

namespace mlsup::edges {

class Pacer {
 public:
  // per_second > 0; burst >= 1 calls may go at once. now: seconds on a clock that never steps;
  // sleep: blocks for seconds.
  Pacer(double per_second, int burst, std::function<double()> now, std::function<void(double)> sleep);

  // Waits for this caller's turn; returns the seconds waited.
  double wait();
  // Takes the next turn without waiting: the seconds until it comes (0: now).
  double reserve();

 private:
  double interval_, tolerance_;
  std::function<double()> now_;
  std::function<void(double)> sleep_;
  std::mutex mutex_;
  double next_ = 0;  // the theoretical arrival time of the next call
};

}  // namespace mlsup::edges
