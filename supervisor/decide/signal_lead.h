#pragma once
// The pre-timeout signal's lead sized from the training's measured pace (pure): slurm.signal_lead: auto.
#include <optional>

namespace mlsup::decide {

// The least lead that lets the training finish a step and a save before the limit: a step and a save
// as measured (p95); nullopt until a save was measured.
std::optional<double> needed_lead(std::optional<double> save_p95, std::optional<double> step_p95);

// The lead auto gives, in whole seconds: 1.5 times the needed lead, and a minute for Slurm's timer (it
// looks at time limits only every half minute or so), at most half the time limit (seconds; 0 = none);
// nullopt until a save was measured (the configured lead holds).
std::optional<long long> auto_lead(std::optional<double> save_p95, std::optional<double> step_p95, long long time_limit);

}  // namespace mlsup::decide
