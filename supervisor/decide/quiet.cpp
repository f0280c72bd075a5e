#include "decide/quiet.h"

#include <algorithm>

namespace mlsup::decide {

namespace {

// Slurm is asked this long before the time limit's end, so that a pass looks at once as it comes.
constexpr double kLimitLead = 1;
// A pause in the heartbeat shorter than this is never a move (passes see steps on their own grid).
constexpr double kLeastSilence = 2;

}  // namespace

double quiet_silence(const QuietSigns& s) {
  const double steps = s.step ? 3 * *s.step : 0;
  const double silence = std::min(s.running_poll, std::max(kLeastSilence, steps));
  return s.hang_after > 0 ? std::min(silence, s.hang_after / 2) : silence;
}

double quiet_until(const QuietSigns& s, double now_mono, double now_wall) {
  if (s.running_poll <= s.poll) return 0;
  if (!s.job_running || !s.only_status || !s.heartbeat || s.in_phase || s.progress_at <= 0) return 0;
  double until = s.progress_at + quiet_silence(s);
  if (s.job_end > 0) until = std::min(until, now_mono + (s.job_end - now_wall) - kLimitLead);
  return until > now_mono ? until : 0;
}

}  // namespace mlsup::decide
