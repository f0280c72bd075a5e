#pragma once
// The training's measured pace from its heartbeat (pure): how long a step takes (between two steps
// outside any phase) and how long a save takes (the "saving" phase, from the first pass that saw it
// to the first that saw it over), over the campaign's recent steps and saves.
#include <optional>
#include <vector>

#include "observe/heartbeat.h"

namespace mlsup::engine {

// Samples kept of each kind (the newest): enough for a p95, small enough for memory.json.
inline constexpr std::size_t kPaceSamples = 64;

struct Pace {
  std::vector<double> steps;  // seconds per step (the steps between two changes seen, averaged), newest last
  std::vector<double> saves;  // seconds per save, newest last
  double saving_since = 0;    // mono: since when the heartbeat says "saving"; 0 while it does not
  bool operator==(const Pace&) const = default;
};

// Folds the change from before to after (the attempt's combined heartbeat, one pass apart) into pace.
void learn_pace(Pace& pace, const HeartbeatSeen& before, const HeartbeatSeen& after);

// The attempt's last word, read at its end: a save the heartbeat no longer names (the training wrote its
// step after the save and exited before a pass saw it) counts, up to written_at (mono: when that last
// content was written, from its file's time; outside [the save's start, now] it is taken as now).
void learn_last_save(Pace& pace, const HeartbeatSeen& last, double written_at, double now);

// The q-quantile (0..1) of samples, nearest rank; nullopt when there is none.
std::optional<double> quantile(std::vector<double> samples, double q);

struct PaceFigures {
  std::optional<double> step_p50, step_p95, save_p50, save_p95;
  std::size_t steps = 0, saves = 0;  // samples behind them
};
PaceFigures pace_figures(const Pace& pace);

}  // namespace mlsup::engine
