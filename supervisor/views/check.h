#pragma once
// `mlsup check`, the dead-man (pure): what was seen of each campaign in, findings with a severity out,
// and the one status line of the monitoring-plugin convention (0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN).
#include <optional>
#include <string>
#include <vector>

#include "decide/disk.h"
#include "decide/runway.h"
#include "state/lifecycle.h"

namespace mlsup::engine {

using decide::DiskLimits;
using decide::DiskUse;
using decide::Severity;
using decide::severity_name;

// What the campaign's journal says its current attempt is doing.
enum class AttemptPhase {
  None,         // nothing submitted yet
  Submitting,   // an attempt decided, no job for it yet (sbatch in flight or retried)
  Job,          // its job submitted and not ended in the journal
  Ended,        // its last attempt ended and no next one was decided yet
};

// Everything check needs of one campaign, gathered by the edge (cli/check_verb.cpp).
struct CheckFacts {
  std::string name;           // the campaign (a set's run: the run's name)
  std::optional<Lifecycle> state;  // none: the campaign could not be read
  std::string load_error;     // the config or journal could not be read ("" when it could): UNKNOWN
  bool held_back = false;     // a set's gate waits or blocks it, or its window is closed: it is not expected to run
  bool stopping = false;      // the kill switch is set or a cancel was asked: it is ending
  AttemptPhase phase = AttemptPhase::None;
  int attempt = 0;
  long long job_id = 0;              // Job: the job the journal names
  std::optional<bool> job_alive;     // Job: Slurm shows it pending or running; none = Slurm not asked or not answering
  std::string job_state;             // Job: Slurm's state of it ("" when Slurm has forgotten it)
  std::string slurm_error;           // why Slurm could not be asked ("" when it answered)
  std::string shortfall;             // Job: what its pending job asks that the partition cannot give ("" = nothing)
  int failed_submissions = 0;        // Submitting: sbatch failures for this attempt
  bool backing_off = false;          // Ended: the backoff before the next attempt has not run out
  bool supervised = false;           // a supervisor holds the lease now
  std::optional<double> since_pass;  // seconds since a supervisor last passed (its lease written); none = never
  double stale_after = 600;          // seconds without a pass that are one too many
  std::optional<DiskUse> disk;       // the checkpoint folder's file system
  std::string disk_error;            // why it could not be measured
  std::optional<decide::Runway> runway;  // its runway at the campaign's pace (decide/runway.h)
  std::string runway_text;           // in words
  double runway_alert = 24 * 3600;   // disk.runway_alert: WARNING below it; no room for the next save is CRITICAL
};

// Thresholds on the checkpoint folder's file system, in percent used (bytes or inodes).
struct Finding {
  Severity severity = Severity::Ok;
  std::string campaign;
  std::string text;  // "not running nor queued (job 12 CANCELLED)"
};

// Every condition the campaigns are in, worst first (a campaign's own order kept): a campaign that
// should run whose job is neither running nor queued, supervision that has not passed for longer
// than expected, a checkpoint file system nearly full; what could not be seen is UNKNOWN.
std::vector<Finding> check_findings(const std::vector<CheckFacts>& campaigns, const DiskLimits& disk);

// The worst severity among the findings (OK for none).
Severity worst(const std::vector<Finding>& findings);

// The status line: "MLSUP CRITICAL - b: not running nor queued (...); a: ..." or, with no finding,
// "MLSUP OK - 3 campaigns: 2 running, 1 completed".
std::string check_line(const std::vector<Finding>& findings, const std::vector<CheckFacts>& campaigns);

}  // namespace mlsup::engine
