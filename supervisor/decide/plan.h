#pragma once
// Checkpoint sizing (pure): the Young/Daly interval and the goodput a checkpoint interval gives, from a
// save's cost, the mean time between failures and the time a failure costs beyond the recomputed work.
// README ("mlsup plan") gives the formulas.
#include <optional>
#include <vector>

namespace mlsup::decide {

// Young's interval: the compute time between two saves that loses least, sqrt(2 x save x mtbf) (seconds).
double young_daly_interval(double save, double mtbf);

// The share of wall time spent on kept work (0..1) with `interval` s of compute between saves of `save` s,
// a failure every `mtbf` s on average, each costing `restart` s (detection, resubmission, queue, start-up)
// and half a cycle of recomputation: interval / (interval + save) x (1 - (restart + cycle / 2) / mtbf).
// No failures (mtbf unknown, nullopt): the saves' share alone.
double expected_goodput(double interval, double save, std::optional<double> mtbf, double restart);

// The compute between two saves as the checkpoints show it: the median step distance of consecutive
// checkpoints (steps ascending) times the step time; nullopt with fewer than two checkpoints or no step time.
std::optional<double> save_interval(const std::vector<long long>& checkpoint_steps, std::optional<double> step_seconds);

// The median step distance of consecutive checkpoints; nullopt with fewer than two.
std::optional<long long> save_every_steps(const std::vector<long long>& checkpoint_steps);

// The mean time between failures over `exposure` seconds of running with `failures` failures; with none, the
// exposure itself (a lower bound: is_lower_bound says so); nullopt when nothing ran.
struct Mtbf {
  double seconds = 0;
  bool lower_bound = false;
};
std::optional<Mtbf> mtbf_from(double exposure, int failures);

// The wall time the training needs for `steps` more steps of `step_seconds` at a goodput (0..1).
std::optional<double> wall_to_steps(long long steps, std::optional<double> step_seconds, double goodput);

// The time limit that fits the rest of the training in one job, rounded up to 10 minutes: the wall left plus
// a tenth, and the signal's lead; longer limits cost a restart each.
long long fitting_time_limit(double wall_left, long long signal_lead);

// How many more time limits the training meets before wall_left is done under a limit of `limit` s with a
// signal `lead` s before it (0 when it fits in one job).
long long time_limits_left(double wall_left, long long limit, long long lead);

}  // namespace mlsup::decide
