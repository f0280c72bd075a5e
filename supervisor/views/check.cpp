#include "views/check.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

#include "config/duration.h"

namespace mlsup::engine {
namespace {

using Seconds = std::chrono::seconds;

// A finding for campaign f, or none when severity is OK.
std::vector<Finding> one(const CheckFacts& f, Severity s, std::string text) {
  if (s == Severity::Ok) return {};
  return {Finding{s, f.name, std::move(text)}};
}

std::string duration_text(double seconds) {
  return config::format_duration(Seconds(static_cast<long long>(std::max(0.0, std::round(seconds)))));
}

bool ended(const CheckFacts& f) { return f.state && has_ended(*f.state); }

// A campaign that should run: not ended, paused, held back by its set or its window, nor on its way out.
bool should_run(const CheckFacts& f) {
  return (f.state == Lifecycle::Running || f.state == Lifecycle::NotStarted) && !f.held_back && !f.stopping;
}

// (a) A campaign that should run whose job is neither running nor queued.
std::vector<Finding> not_running(const CheckFacts& f, const DiskLimits&) {
  if (!should_run(f)) return {};
  const std::string attempt = "attempt " + std::to_string(f.attempt);
  switch (f.phase) {
    case AttemptPhase::None:
      return one(f, Severity::Warning, "not started: nothing holds it back, and no supervisor has submitted it");
    case AttemptPhase::Submitting:
      return one(f, f.failed_submissions > 0 ? Severity::Warning : Severity::Ok,
                 attempt + " not submitted: sbatch failed " + std::to_string(f.failed_submissions) + " time(s)");
    case AttemptPhase::Ended:
      return one(f, f.backing_off ? Severity::Ok : Severity::Warning,
                 attempt + " ended and nothing was submitted since: not running nor queued");
    case AttemptPhase::Job:
      break;
  }
  const std::string job = "job " + std::to_string(f.job_id);
  if (!f.job_alive)
    return one(f, Severity::Unknown, job + " of " + attempt + ": Slurm could not be asked: " + f.slurm_error);
  if (*f.job_alive && !f.shortfall.empty() && f.job_state == "PENDING")
    return one(f, Severity::Critical, job + " of " + attempt + " cannot start: it " + f.shortfall);
  if (*f.job_alive) return {};
  return one(f, Severity::Critical,
             "not running nor queued (" + job + " of " + attempt + " " +
                 (f.job_state.empty() ? "is forgotten by Slurm" : f.job_state) + ", no supervisor has followed it up)");
}

// (b) Supervision that has not passed for longer than expected: WARNING past stale_after, CRITICAL past twice it.
std::vector<Finding> stale(const CheckFacts& f, const DiskLimits&) {
  if (ended(f) || f.supervised || !f.since_pass || *f.since_pass <= f.stale_after) return {};
  const Severity s = *f.since_pass > 2 * f.stale_after ? Severity::Critical : Severity::Warning;
  return one(f, s, "no supervisor has passed for " + duration_text(*f.since_pass) + " (expected within " +
                       duration_text(f.stale_after) + ")");
}

// (c) The checkpoint folder's file system nearly full, in bytes or inodes.
std::vector<Finding> disk_full(const CheckFacts& f, const DiskLimits& limits) {
  if (ended(f)) return {};
  if (!f.disk_error.empty()) return one(f, Severity::Unknown, "checkpoint file system not measured: " + f.disk_error);
  if (!f.disk) return {};
  return one(f, decide::disk_severity(*f.disk, limits), decide::disk_text(*f.disk));
}

// (d) The checkpoint file system full sooner than disk.runway_alert at the campaign's pace (WARNING), or with no
// room for the next save (CRITICAL).
std::vector<Finding> runway_low(const CheckFacts& f, const DiskLimits&) {
  if (ended(f) || !f.runway || !decide::runway_short(*f.runway, f.runway_alert)) return {};
  return one(f, f.runway->state == decide::RunwayState::NoRoom ? Severity::Critical : Severity::Warning, f.runway_text);
}

// A config or journal that could not be read: nothing else is known of the campaign.
std::vector<Finding> unreadable(const CheckFacts& f, const DiskLimits&) {
  return f.load_error.empty() ? std::vector<Finding>{} : one(f, Severity::Unknown, f.load_error);
}

using Condition = std::vector<Finding> (*)(const CheckFacts&, const DiskLimits&);
constexpr Condition kConditions[] = {not_running, stale, disk_full, runway_low};

int rank(Severity s) {  // UNKNOWN ranks below CRITICAL: a condition seen outweighs one not seen
  return s == Severity::Critical ? 3 : s == Severity::Unknown ? 2 : static_cast<int>(s);
}

}  // namespace

std::vector<Finding> check_findings(const std::vector<CheckFacts>& campaigns, const DiskLimits& disk) {
  std::vector<Finding> out;
  for (const auto& f : campaigns) {
    if (auto u = unreadable(f, disk); !u.empty()) {
      out.insert(out.end(), u.begin(), u.end());
      continue;
    }
    for (const auto condition : kConditions) {
      auto found = condition(f, disk);
      out.insert(out.end(), found.begin(), found.end());
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const Finding& a, const Finding& b) { return rank(a.severity) > rank(b.severity); });
  return out;
}

Severity worst(const std::vector<Finding>& findings) {
  Severity out = Severity::Ok;
  for (const auto& f : findings)
    if (rank(f.severity) > rank(out)) out = f.severity;
  return out;
}

std::string check_line(const std::vector<Finding>& findings, const std::vector<CheckFacts>& campaigns) {
  std::string line = std::string("MLSUP ") + severity_name(worst(findings)) + " - ";
  if (!findings.empty()) {
    for (std::size_t i = 0; i < findings.size(); ++i)
      line += (i ? "; " : "") + findings[i].campaign + ": " + findings[i].text;
    return line;
  }
  std::map<std::string, int> states;
  for (const auto& f : campaigns) ++states[f.held_back ? "held back" : f.state ? std::string(lifecycle_name(*f.state)) : ""];
  line += std::to_string(campaigns.size()) + (campaigns.size() == 1 ? " campaign:" : " campaigns:");
  bool first = true;
  for (const auto& [state, n] : states) line += (first ? " " : ", ") + std::to_string(n) + " " + state, first = false;
  return line;
}

}  // namespace mlsup::engine
