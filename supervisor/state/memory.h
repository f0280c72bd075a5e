#pragma once
// What the engine remembers between passes beyond the journal: one struct, persisted in
// <state_dir>/memory.json (a decision's change at once, observations at most every
// memory_save_interval and before a tick or a supervisor lets go), so that `mlsup tick` (a new
// process each pass) decides exactly as `mlsup run` does. Its times are on the monotonic clock of the host and boot that wrote
// them; read under another clock they are re-based by the wall time elapsed since the write.
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "decide/stragglers.h"
#include "observe/heartbeat.h"
#include "observe/pace.h"

namespace mlsup::engine {

// The clocks a pass reads: monotonic for every silence, backoff and timer; wall for budget windows,
// exclusion expiry and the journal's times.
struct Clocks {
  double wall = 0;        // unix seconds
  double mono = 0;        // seconds on a clock that never steps (CLOCK_BOOTTIME)
  std::string clock_id;   // which monotonic clock: host and boot id
};

// A cancel mlsup keeps sending until the job ends.
struct CancelTries {
  int sent = 0;            // cancels sent so far
  int failed = 0;          // of them, refused or unanswered by Slurm
  double first_at = 0;     // mono: the first send
  double next_at = 0;      // mono: no resend before this
  bool alerted = false;    // people were told the job does not go away
  bool operator==(const CancelTries&) const = default;
};

// A wait the journal decided in wall time, run on the monotonic clock: `at` gates what (attempt,
// count) names; a wait this memory did not see start is taken from the journal's wall-time deadline.
struct Deadline {
  int attempt = 0;
  int count = 0;   // which occurrence for that attempt (failures so far), 0 when there is one
  double at = 0;   // mono: not before this
  bool operator==(const Deadline&) const = default;
};

// Looks by tag that found nothing since the sbatch failure (attempt, count) whose outcome is unknown.
struct Absence {
  int attempt = 0;
  int count = 0;  // which failure of that attempt (failures so far)
  int looks = 0;
  bool operator==(const Absence&) const = default;
};

// A step the attempt's heartbeat showed, and when mlsup first saw it (mono): status's step rate.
struct StepSeen {
  double at = 0;
  long long step = 0;
  bool operator==(const StepSeen&) const = default;
};

// How far back the steps seen are kept (seconds of mono time); the rate is taken over them.
inline constexpr double kStepWindow = 600;

struct Memory {
  std::string clock_id;        // the monotonic clock the times below are on
  double saved_wall = 0;       // wall time of the last save, for re-basing
  double saved_mono = 0;       // mono time of the last save
  Calibration calibration;     // the campaign's pace, over all attempts
  Pace pace;                   // its measured step and save times, over all attempts (the newest kept)

  int attempt = 0;             // the attempt the fields below are about
  HeartbeatSet heartbeat;      // its heartbeat files as seen (mono times)
  std::vector<StepSeen> steps; // its heartbeat's steps as they changed, over the last kStepWindow seconds
  double running_seen_at = 0;  // mono: the last pass that saw its job running
  std::string running_nodes;   // the nodes its job ran on, as last seen running (an ending Slurm forgot keeps them)
  double first_step_at = 0;    // mono: when its heartbeat first showed a step past its resume point (0: not yet)
  double first_step_wall = 0;  // unix seconds: that first step, from the heartbeat files' write times (0: not yet)
  double last_progress_wall = 0;  // unix seconds: its last progress, likewise (a tick sees it as it was written)
  double suspended_at = 0;     // mono: since when its job is suspended (at the latest); 0 while not
  double pending_since = 0;    // mono: the first pass that saw its job pending
  std::string pending_reason;  // Slurm's pending reason as last told ("" before the first)
  double unavailable_since = 0;  // mono: since when it waits for missing nodes (or since the last relaxation)
  double checkpoints_looked_at = 0;  // mono: when the running attempt's checkpoints were last looked at (next.env, retention)
  double waited_on_probed_at = 0;  // mono: when the nodes the other ranks wait on were last probed
  std::map<std::string, decide::RankPace> stragglers;  // each rank's compute per step (heartbeat file name -> pace; mono)
  CancelTries cancel;
  Deadline resubmit;           // the backoff after an ending: no next attempt before it
  Deadline sbatch_retry;       // after failed sbatches (count: failures so far): no sbatch again before it
  Absence tag_absent;          // after an sbatch of unknown outcome: how often its tag was looked for in vain
  std::string slurm_error;     // the job query's failure as last told ("" while it answers)
  double slurm_failing_since = 0;  // mono: the first pass whose job query failed, of those in a row (0: it answers)
  bool slurm_alerted = false;  // people were told that Slurm has not answered for notify.unreachable_after
  int window_told = 0;         // the window as last told: 1 open, 2 closed (0: not yet)
  int disk_level = 0;          // the checkpoint file system's severity last seen (decide::Severity): told on rising
  bool runway_told = false;    // the checkpoint file system's runway was told short (told again once it recovered)
  std::string sized_path;      // the checkpoint last measured for the runway (its size is not measured again)
  double sized_bytes = 0, sized_files = 0;
  int forgotten_told = 0;      // the attempt whose forgotten job was told to be waited for (0: none)
  std::string shortfall;       // what the pending job asks that the partition cannot give, as last told ("" = none)
  std::string release_error;   // why its job's release failed, as last told ("" = none)
  double duplicates_swept_at = 0;  // mono: when the campaign's tags were last looked for (not saved: a tick looks at once)
  bool operator==(const Memory&) const = default;
};

// Notes the attempt's heartbeat step at now (mono) when it changed; drops what is older than kStepWindow,
// keeping two at least.
void note_step(Memory& m, long long step, double now);

// Starts the per-attempt part afresh when attempt is not the one remembered.
void focus(Memory& m, int attempt);

// m but for what passes observe without deciding anything (the heartbeat and steps seen past the
// second, the step times, the calibration but for the steady timeout it puts in force under heartbeat
// and poll_interval, when the job was last seen running or making progress, when the checkpoints and
// waited-on nodes were last looked at, the checkpoint's size) and the save's own clock: two memories
// alike in it differ in observations only, whose saving may wait (memory_save_interval). A new
// timeout in force, a save measured, a first rate are not such.
Memory decisions_of(Memory m, const config::HeartbeatSettings& heartbeat, config::Millis poll_interval);

// The memory as JSON, and back (a missing or malformed field takes its default; never throws).
nlohmann::json to_json(const Memory& m);
Memory memory_from_json(const nlohmann::json& j);

// Moves every mono time of m onto the clock of now, when m was written under another one: each
// keeps its age as the wall clock measured it (never less than zero).
void rebase(Memory& m, const Clocks& now);

// A time of the monotonic clock (mono) as wall time, at clocks now; 0 ("never") stays 0.
double wall_of(double mono, const Clocks& now);

// Starts a wait of seconds on d for (attempt, count), from now (mono).
void start_wait(Deadline& d, int attempt, int count, double seconds, double now);

// True once the wait on d for (attempt, count) is over at clocks c; a wait d does not hold is taken
// from the journal's wall-time deadline and kept from then on.
bool waited(Deadline& d, int attempt, int count, double wall_deadline, const Clocks& c);

// Moves the heartbeat's times by seconds (a job that was suspended that long did not go silent).
void shift(HeartbeatSet& set, double seconds);

}  // namespace mlsup::engine
