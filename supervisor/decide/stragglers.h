#pragma once
// Stragglers in synchronous training. Every rank steps at the same rate (the fast ones wait for the
// slow one in the all-reduce), so step times cannot tell a slow rank; its own compute per step can
// (the heartbeat's compute=, the time to its own gradients, outside the collectives). Each rank's
// figure is smoothed over its steps; a rank whose smoothed compute exceeds the median of the others'
// by slower_by, without a break, for `for_seconds`, is a straggler. Pure: figures in, verdicts out.
#include <map>
#include <string>
#include <vector>

namespace mlsup::decide {

struct StragglerSettings {
  double slower_by = 0.2;    // slower than the others' median by this share (0.2: 20 %)
  double for_seconds = 600;  // without a break for this long
};

// One rank's compute as followed across passes.
struct RankPace {
  double smoothed = -1;     // its compute seconds per step, smoothed over its steps (-1: none yet)
  long long step = -1;      // the step of the last figure taken (one figure per step)
  double slower_since = 0;  // monotonic seconds since it has been slower than the others; 0: it is not
  bool told = false;        // told a straggler since it became slower (told again only after a recovery)
  bool operator==(const RankPace&) const = default;
};

// A rank's heartbeat as seen now: its step and that step's compute (-1: not told).
struct ComputeSeen {
  long long step = -1;
  double compute = -1;
};

struct Straggler {
  std::string rank;        // its heartbeat file's name ("<node>.<rank>")
  double compute = 0;      // its smoothed compute seconds per step
  double others = 0;       // the others' median
  double slower_for = 0;   // seconds it has been slower
};

// The weight of a new step's figure in the smoothed one.
inline constexpr double kComputeSmoothing = 0.3;
// A rank is slower only by more than this too (seconds per step): a share of a few milliseconds is noise.
inline constexpr double kLeastExcess = 0.01;

// Takes each rank's new step's figure into paces (a rank gone from `seen` keeps its pace), marks from
// when each is slower than the median of the others' by settings.slower_by and by kLeastExcess (fewer than two ranks with
// figures: none is), and returns those that have now been slower for settings.for_seconds and were not
// told yet, the slowest first, marking them told (a rank back within the allowance may be told again).
std::vector<Straggler> follow_stragglers(std::map<std::string, RankPace>& paces,
                                         const std::map<std::string, ComputeSeen>& seen, double now,
                                         const StragglerSettings& settings);

}  // namespace mlsup::decide
