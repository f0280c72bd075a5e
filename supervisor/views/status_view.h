#pragma once
// The figures `mlsup status` shows beside the journal's history (pure): the step and its rate, the ETA
// to target.steps, the newest checkpoint's age, the heartbeat's age, the restarts by class, the time
// lost to failures and the goodput. Each figure's definition is in README.md ("What status says").
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "state/memory.h"
#include "state/state.h"

namespace mlsup::engine {

// The newest complete checkpoint as status shows it.
struct CheckpointSeen {
  std::string path;
  long long step = 0;
  double written = 0;  // wall time of its last change (0: unknown)
};

// What the figures are computed from. memory is on the clock of now (re-based).
struct StatusInputs {
  const config::Config& config;
  const CampaignState& state;
  const Memory& memory;
  std::optional<CheckpointSeen> checkpoint;
  Clocks now;
};

// The figures as JSON keys (merged into status --json): step, step_source, step_rate, step_rate_window,
// target_steps, eta, checkpoint, heartbeat_age, hang_timeout (the steady timeout in force, the configured
// one, whether calibration shortened it, the steps it learned from), restarts, restarts_by_class, time.
nlohmann::json status_figures(const StatusInputs& in);

// One attempt's span and steps as the time figures count them.
struct AttemptSpan {
  int number = 0;
  double start = 0;          // its submission (or the intent, when it was never submitted)
  double end = 0;            // its ending, or now while it runs
  long long done = 0;        // steps it computed (reached minus its resume step)
  long long kept = 0;        // of them, those the campaign keeps (up to where the next attempt resumed)
  bool failed = false;       // it ended in a failure class (one the policy backs off after)
  double gap = 0;            // from its end to the next attempt's submission (or now)
  bool timed = false;        // its steps' times are known (first_step, last_progress: its ended record, when
                             // this mlsup wrote it, or memory for the running attempt); else the span is shared out by steps
  double first_step = 0;     // wall: its first step past its resume point (0: none)
  double last_progress = 0;  // wall: its heartbeat's last progress (0: none)
  double lost_until = 0;     // a failed one: when the training stepped again (the next attempt's first step),
                             // or the next attempt ended without a step, or now
};

// The running attempt's step times (wall; 0: none seen), from memory, for attempt_spans.
struct RunningTimes {
  double first_step = 0, last_progress = 0;
};

// The running attempt's first step and last progress as memory holds them, on the wall clock of now.
RunningTimes running_times(const CampaignState& s, const Memory& m, const Clocks& now);

// The time an attempt spent on the steps the campaign keeps: from its first step to its last progress,
// shared out by steps (untimed: its whole span so shared).
double kept_time(const AttemptSpan& a);
// The time a failed attempt lost (README "time lost"): the time it spent on steps not kept, and from its
// last progress (its end, when it made none) until the training stepped again (lost_until); untimed: its
// span less the kept time, plus the gap to the next submission. 0 for an attempt that did not fail.
// Status, report and metrics add these up.
double time_lost(const AttemptSpan& a);

// Every attempt's span, oldest first, from the state (the times its records told, and the steps); step is
// the current attempt's heartbeat step (-1: none).
std::vector<AttemptSpan> attempt_spans(const CampaignState& s, long long current_step, double now,
                                       const RunningTimes& running = {});

// Drops the oldest attempts of s but the newest keep, those whose figures are final (they and the attempt
// after them ended), their time figures added to s.earlier: what a supervisor holds of a long campaign,
// and status from it adds up as from every attempt. (Should an old attempt never end, more than 4 x keep
// held are dropped anyway, counted with what is known of them.)
void fold_earlier(CampaignState& s, std::size_t keep);

// Why a fixed slurm.signal_lead is too short for the save and step times measured (p95), or nullopt.
std::optional<std::string> short_lead_warning(const config::Config& c, const PaceFigures& pace);

// The time figures of status --json's "time" (began, elapsed, useful, lost_to_failures, recomputed_steps, goodput)
// over spans (attempt_spans of the same state) at wall time now.
nlohmann::json time_figures(const std::vector<AttemptSpan>& spans, const CampaignState& s, double now);

// "1h02m", "3m05s", "12s": a duration for people; "?" for a negative one.
std::string human_duration(double seconds);

}  // namespace mlsup::engine
