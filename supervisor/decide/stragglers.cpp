#include "decide/stragglers.h"

#include <algorithm>

namespace mlsup::decide {
namespace {

// A new step's figure folded into the rank's smoothed compute.
void take_figure(RankPace& pace, const ComputeSeen& seen) {
  if (seen.compute < 0 || seen.step == pace.step) return;
  pace.step = seen.step;
  pace.smoothed = pace.smoothed < 0 ? seen.compute
                                    : kComputeSmoothing * seen.compute + (1 - kComputeSmoothing) * pace.smoothed;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const auto n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The median of every other rank's smoothed compute; -1 when no other rank has one.
double others_median(const std::map<std::string, RankPace>& paces, const std::string& rank) {
  std::vector<double> others;
  for (const auto& [name, p] : paces)
    if (name != rank && p.smoothed >= 0) others.push_back(p.smoothed);
  return others.empty() ? -1 : median(std::move(others));
}

}  // namespace

std::vector<Straggler> follow_stragglers(std::map<std::string, RankPace>& paces,
                                         const std::map<std::string, ComputeSeen>& seen, double now,
                                         const StragglerSettings& settings) {
  for (const auto& [name, s] : seen) take_figure(paces[name], s);
  std::map<std::string, double> others;  // judged against the paces before any is marked
  for (const auto& [name, p] : paces) others[name] = others_median(paces, name);
  std::vector<Straggler> out;
  for (auto& [name, p] : paces) {
    const double median_others = others[name];
    const bool slower = p.smoothed >= 0 && median_others >= 0 &&
                        p.smoothed - median_others > std::max(median_others * settings.slower_by, kLeastExcess);
    if (!slower) {
      p.slower_since = 0;
      p.told = false;
      continue;
    }
    if (p.slower_since == 0) p.slower_since = now;
    if (p.told || now - p.slower_since < settings.for_seconds) continue;
    p.told = true;
    out.push_back({name, p.smoothed, median_others, now - p.slower_since});
  }
  std::sort(out.begin(), out.end(), [](const Straggler& a, const Straggler& b) { return a.compute / a.others > b.compute / b.others; });
  return out;
}

}  // namespace mlsup::decide
