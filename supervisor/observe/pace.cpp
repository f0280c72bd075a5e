#include "observe/pace.h"

#include <algorithm>
#include <cmath>

namespace mlsup::engine {
namespace {

void keep(std::vector<double>& samples, double v) {
  samples.push_back(v);
  if (samples.size() > kPaceSamples) samples.erase(samples.begin(), samples.end() - kPaceSamples);
}

bool saving(const HeartbeatSeen& h) { return h.phase == "saving" && !h.waiting; }

}  // namespace

void learn_pace(Pace& pace, const HeartbeatSeen& before, const HeartbeatSeen& after) {
  if (saving(after) && pace.saving_since <= 0) pace.saving_since = after.changed_at;
  if (!saving(after) && pace.saving_since > 0) {
    // The save is over once a content without the phase is seen: a new step, or the same step stepping on.
    if (after.changed_at > pace.saving_since) keep(pace.saves, after.changed_at - pace.saving_since);
    pace.saving_since = 0;
  }
  // A step's time: between two progress changes, both outside any phase (the first of an attempt is start-up).
  if (before.progress_at <= 0 || after.progress_at <= before.progress_at || after.step <= before.step) return;
  if (!before.phase.empty() || !after.phase.empty()) return;
  keep(pace.steps, (after.progress_at - before.progress_at) / static_cast<double>(after.step - before.step));
}

void learn_last_save(Pace& pace, const HeartbeatSeen& last, double written_at, double now) {
  if (pace.saving_since <= 0 || saving(last)) return;
  const double ended = written_at > pace.saving_since && written_at <= now ? written_at : now;
  if (ended > pace.saving_since) keep(pace.saves, ended - pace.saving_since);
  pace.saving_since = 0;
}

std::optional<double> quantile(std::vector<double> samples, double q) {
  if (samples.empty()) return std::nullopt;
  std::sort(samples.begin(), samples.end());
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(samples.size())));
  return samples[std::clamp<std::size_t>(rank, 1, samples.size()) - 1];
}

PaceFigures pace_figures(const Pace& pace) {
  return {quantile(pace.steps, 0.5), quantile(pace.steps, 0.95), quantile(pace.saves, 0.5), quantile(pace.saves, 0.95),
          pace.steps.size(), pace.saves.size()};
}

}  // namespace mlsup::engine
