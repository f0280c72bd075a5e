#pragma once
// One struct per event that reconcile tells, its kind beside it (checked against kEventKinds when the code
// compiles) and its JSON both ways (reconcile.cpp: a table of its fields). An event log's line is the struct's
// JSON with "event", "time" and "campaign" added by whoever writes it.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "events/kinds.h"
#include "slurm_model/types.h"
#include "util/json_fields.h"

namespace mlsup::events {

// Exclusions left out of a job's ExcNodeList so that enough nodes remain (the cap).
struct ExclusionsCapped {
  static constexpr EventKind kKind{"exclusions-relaxed"};
  std::vector<std::string> kept;
  int cap = 0;
  std::string reason;
};

// Slurm did not answer this pass's question about the attempt's job (or the chain's array).
struct SlurmUnavailable {
  static constexpr EventKind kKind{"slurm-unavailable"};
  int attempt = 0;
  std::optional<slurm::JobId> job_id;
  std::optional<std::string> kind;  // slurm::ErrorKind's name
  std::string detail;
  std::optional<std::string> decision;
};

// Accounting could not be asked about a job whose fate it holds.
struct AccountingUnavailable {
  static constexpr EventKind kKind{"accounting-unavailable"};
  int attempt = 0;
  std::optional<slurm::JobId> job_id;
  std::string detail, decision;
};

// Slurm has not answered the job query for notify.unreachable_after.
struct SlurmUnreachable {
  static constexpr EventKind kKind{"slurm-unreachable"};
  int attempt = 0;
  slurm::JobId job_id = 0;
  std::string kind, detail;
  long long for_ = 0;  // seconds without an answer
  std::string reason;
};

// The checkpoint file system rose to a level (WARNING, CRITICAL).
struct DiskNearlyFull {
  static constexpr EventKind kKind{"disk-nearly-full"};
  std::string path, level;
  double used_percent = 0;
  std::optional<double> inodes_percent;  // null where the file system counts no inodes
  std::string reason;
};

// The checkpoint file system fills sooner than disk.runway_alert at the campaign's pace, or has no room for the next save.
struct DiskRunwayShort {
  static constexpr EventKind kKind{"disk-runway-short"};
  std::string path, state;
  std::optional<double> runway;  // seconds; null when the next save does not fit
  double checkpoint_bytes = 0;
  std::optional<double> cadence;  // seconds from one save to the next, as measured
  std::string reason;
};

// The checkpoint folder's pointer to the newest was not followed.
struct CheckpointPointerIgnored {
  static constexpr EventKind kKind{"checkpoint-pointer-ignored"};
  std::string detail;
};

// A chain task runs without having claimed its attempt.
struct ChainTaskUnclaimed {
  static constexpr EventKind kKind{"chain-task-unclaimed"};
  int attempt = 0;
  slurm::JobId job_id = 0;
  double running_for = 0;
  std::string reason;
};

// Lines of the plugin's node records that could not be read.
struct NodeRecordsProblems {
  static constexpr EventKind kKind{"node-records-problems"};
  slurm::JobId job_id = 0;
  std::vector<std::string> problems;
  std::string decision;
};

// A restart budget reached notify.budget_warn_at.
struct BudgetNearlySpent {
  static constexpr EventKind kKind{"budget-nearly-spent"};
  int attempt = 0;
  std::string budget;
  int used = 0, count = 0;
  std::string window, reason;
};

// Slurm forgot a job that ran; nothing is submitted until its processes are seen gone.
struct ForgottenWaiting {
  static constexpr EventKind kKind{"forgotten-waiting"};
  int attempt = 0;
  slurm::JobId job_id = 0;
  std::vector<std::string> signs;
  std::string decision;
};

// The campaign's window opened or closed.
struct WindowChange {
  std::string hours;
  std::int64_t until = 0;  // when it changes next (UTC seconds)
  std::string reason;
};
struct WindowOpened : WindowChange {
  static constexpr EventKind kKind{"window-opened"};
};
struct WindowClosed : WindowChange {
  static constexpr EventKind kKind{"window-closed"};
};

// A spare-node job has no spare left for a failed node (or lost its batch host).
struct SparesUsedUp {
  static constexpr EventKind kKind{"spares-used-up"};
  int attempt = 0;
  slurm::JobId job_id = 0;
  std::string nodes, batch_host;
  std::vector<std::string> unusable;
  std::string reason;
};

// A suspended job runs again.
struct SuspensionEnded {
  static constexpr EventKind kKind{"suspension-ended"};
  int attempt = 0;
  double suspended_for = 0;
  std::string reason;
};

// A heartbeat file read empty after it had content.
struct HeartbeatEmptyRead {
  static constexpr EventKind kKind{"heartbeat-empty-read"};
  int attempt = 0;
  std::string file, detail;
};

// Slurm's reason why a job waits, when it changes.
struct Pending {
  static constexpr EventKind kKind{"pending"};
  int attempt = 0;
  slurm::JobId job_id = 0;
  std::string slurm_reason, reason;
};

// The nodes a job waited for are usable again (was: the shortfall told before).
struct CapacityRestored {
  static constexpr EventKind kKind{"capacity-restored"};
  int attempt = 0;
  slurm::JobId job_id = 0;
  std::string was, reason;
};

// The partition cannot give what a pending job asks.
struct CapacityShort {
  static constexpr EventKind kKind{"capacity-short"};
  int attempt = 0;
  slurm::JobId job_id = 0;
  std::string shortfall;
  bool alert = true;
  std::string reason;
};

// A rank slower than the others in its own compute per step, for stragglers.for without a break.
struct StragglerFound {
  static constexpr EventKind kKind{"straggler"};
  int attempt = 0;
  slurm::JobId job_id = 0;
  std::string rank;        // its heartbeat file's name ("<node>.<rank>")
  std::string node;
  double compute = 0;      // its smoothed compute seconds per step
  double others = 0;       // the other ranks' median
  double slower_for = 0;   // seconds
  std::string reason;
};

#define MLSUP_EVENTS(X)         \
  X(ExclusionsCapped)           \
  X(SlurmUnavailable)           \
  X(AccountingUnavailable)      \
  X(SlurmUnreachable)           \
  X(DiskNearlyFull)             \
  X(DiskRunwayShort)            \
  X(CheckpointPointerIgnored)   \
  X(ChainTaskUnclaimed)         \
  X(NodeRecordsProblems)        \
  X(BudgetNearlySpent)          \
  X(ForgottenWaiting)           \
  X(WindowOpened)               \
  X(WindowClosed)               \
  X(SparesUsedUp)               \
  X(SuspensionEnded)            \
  X(HeartbeatEmptyRead)         \
  X(Pending)                    \
  X(CapacityRestored)           \
  X(CapacityShort)              \
  X(StragglerFound)

MLSUP_EVENTS(MLSUP_FIELDS_JSON_DECLARE)

}  // namespace mlsup::events
