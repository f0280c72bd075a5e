#pragma once
// How long a training asked to stop through the kill switch (`mlsup cancel`, a window's end) has
// before its job is cancelled (pure): policy.stop_grace, or longer when its saves were measured to
// take longer, and never while its heartbeat says it is saving, up to heartbeat.save_timeout.
#include <optional>

namespace mlsup::decide {

// The grace after the switch: the configured one, or twice the slowest save measured (p95) when longer.
double stop_grace(double configured, std::optional<double> save_p95);

struct StopWait {
  double switch_set_at = 0;  // wall: when the switch was set
  double grace = 0;          // stop_grace()
  double saving_for = -1;    // seconds its heartbeat has said "saving" (-1: it does not)
  double save_timeout = 0;   // heartbeat.save_timeout
};

// True once the job is to be cancelled at wall time now.
bool stop_overdue(const StopWait& w, double now);

}  // namespace mlsup::decide
