#include "report/summary.h"

#include "report/text.h"

namespace mlsup::report {
namespace {

// n and the noun, plural unless n is 1 ("2 attempts", "1 failure").
std::string count(std::size_t n, const std::string& noun) { return std::to_string(n) + " " + noun + (n == 1 ? "" : "s"); }

std::string run_part(const RunFacts& r) {
  if (r.attempts.empty()) return r.run + " " + r.now;
  const auto g = r.time.value("goodput", nlohmann::json());
  return r.run + " " + r.state + " (" + count(r.attempts.size(), "attempt") + ", " +
         count(static_cast<std::size_t>(r.failures), "failure") + ", " + std::to_string(r.steps_gained) +
         " steps gained, " + decimal(r.lost, 1) + " s lost" +
         (g.is_number() ? ", goodput " + decimal(g.get<double>() * 100, 1) + "%" : "") + ")";
}

}  // namespace

std::string summary_line(const Report& r) {
  std::string out = utc_time(r.window.since) + " to " + utc_time(r.window.until) + ":";
  if (r.runs.empty()) return out + " no run";
  for (std::size_t i = 0; i < r.runs.size(); ++i) out += (i == 0 ? " " : "; ") + run_part(r.runs[i]);
  return out;
}

}  // namespace mlsup::report
