#include "config/alert_kinds.h"

#include <array>

namespace mlsup::config {

std::span<const AlertKind> alert_kinds() {
  static constexpr std::array<AlertKind, 10> kinds{{
      {"stopped", "the campaign stopped short of its end (a budget spent, a crash loop, the kill switch, an unknown end)", true},
      {"completed", "the campaign completed", true},
      {"pending", "a job stuck pending for a reason only a person ends, or one that can never start as asked", true},
      {"budget", "a restart budget is nearly spent (notify.budget_warn_at percent of it used in its window)", true},
      {"trouble", "the supervisor's own trouble: Slurm unanswered for notify.unreachable_after, sbatch failing "
                  "repeatedly, the template unusable, a cancel that does not take", true},
      {"hang", "a running job was found hung (its liveness went silent)", false},
      {"restart", "an attempt failed and the next is submitted (not after a time limit, a preemption or a planned exit)", false},
      {"exclusion", "a node was excluded for a failure", false},
      {"disk", "the checkpoint folder's file system reached 80% used, or 95% (bytes or inodes), or fills sooner than "
               "disk.runway_alert at the campaign's pace; once per rise", true},
      {"straggler", "a rank slower than the others in its own compute per step by stragglers.slower_by for stragglers.for "
                    "(the heartbeat's compute=); once until it recovers", true},
  }};
  return kinds;
}

std::span<const std::string_view> default_alert_kinds() {
  static constexpr std::array<std::string_view, 7> names{"stopped", "completed", "pending", "budget", "trouble", "disk",
                                                         "straggler"};
  return names;
}

}  // namespace mlsup::config
