#pragma once
// The events that tell a journal record (a fact): each struct holds what the event says beyond the record's
// own fields (state/records.h), its kind beside it; the event is the record's JSON with these fields added
// (facts.cpp: a table of its fields).
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "events/kinds.h"
#include "slurm_model/types.h"
#include "util/json_fields.h"

namespace mlsup::events {

// Why, in a sentence.
struct Reasoned {
  std::string reason;
};

// A job was submitted (records::Submitted), with the values it was rendered with.
struct Submitted {
  static constexpr EventKind kKind{"submitted"};
  std::string resume_from;
  long long resume_step = 0;
  std::vector<std::string> exclude;
  std::string script, reason;
  long long signal_lead = 0;  // seconds, sized from the measured pace (signal_lead: auto); 0 = the config's, not written
  std::string debug;          // why it runs with debug_on_retry.env ("" = it does not, not written)
};

// A job found by its tag taken as the attempt's (records::Adopted).
struct Adopted {
  static constexpr EventKind kKind{"adopted"};
  std::string detail;
};

// A node excluded (records::Exclude) for policy.exclusion_ttl, as written in the config.
struct Excluded {
  static constexpr EventKind kKind{"excluded"};
  std::string for_;
};

// A node's exclusion ended early: the failure follows the training (records::ExclusionLifted).
struct ExclusionLifted {
  static constexpr EventKind kKind{"exclusion-lifted"};
};

// An excluded node's GPUs found in another node: the exclusion followed them (records::ExclusionMoved).
struct ExclusionMoved {
  static constexpr EventKind kKind{"exclusion-moved"};
};

// An attempt ended (records::Ended): the job's output file and its last lines.
struct AttemptEnded {
  static constexpr EventKind kKind{"attempt-ended"};
  std::string output, output_tail;
};

// The campaign ended (records::Finished): completed (exit 0) or stopped.
struct Finishing {
  int exit_code = 0;
  bool alert = true;
};
struct Completed : Finishing {
  static constexpr EventKind kKind{"completed"};
};
struct Stopped : Finishing {
  static constexpr EventKind kKind{"stopped"};
};

// The oldest exclusion dropped from a pending job (records::Relaxed): its list read back from Slurm.
struct ExclusionsRelaxed {
  static constexpr EventKind kKind{"exclusions-relaxed"};
  std::string exc_node_list, reason;
};

// A job waits for something waiting does not end (records::PendingAlert).
struct PendingStuck {
  static constexpr EventKind kKind{"pending-stuck"};
  std::string slurm_reason;
  bool alert = true;
  bool never_starts = false;
  std::string reason;
};

// A chain task (array_job_id, values: how it took its turn) or a spare-node job (reason) took an attempt
// (records::Claimed, records::StepClaimed).
struct Claimed {
  static constexpr EventKind kKind{"claimed"};
  std::optional<slurm::JobId> array_job_id;
  std::optional<std::string> values, reason;
};

struct ChainExhausted : Reasoned {
  static constexpr EventKind kKind{"chain-exhausted"};
};
struct CampaignResumed : Reasoned {
  static constexpr EventKind kKind{"campaign-resumed"};
};
struct CampaignPaused : Reasoned {
  static constexpr EventKind kKind{"campaign-paused"};
};
struct CancelRequested : Reasoned {
  static constexpr EventKind kKind{"cancel-requested"};
};
struct Unexcluded : Reasoned {
  static constexpr EventKind kKind{"unexcluded"};
};
struct RequestRefused {
  static constexpr EventKind kKind{"request-refused"};
};
struct JobHeld : Reasoned {
  static constexpr EventKind kKind{"job-held"};
};
struct JobReleased : Reasoned {
  static constexpr EventKind kKind{"job-released"};
};
struct SbatchAwaited : Reasoned {
  static constexpr EventKind kKind{"sbatch-awaited"};
};
struct SbatchEnded : Reasoned {
  static constexpr EventKind kKind{"sbatch-ended"};
};

// mlsup set or removed the kill switch (records::SwitchSet, records::SwitchCleared).
struct SwitchTold {
  std::string switch_, reason;
};
struct KillSwitchSet : SwitchTold {
  static constexpr EventKind kKind{"kill-switch-set"};
};
struct KillSwitchCleared : SwitchTold {
  static constexpr EventKind kKind{"kill-switch-cleared"};
};

// A second job of one attempt cancelled (records::DuplicateCancelled); alert: it was not only queued.
struct DuplicateCancelled {
  static constexpr EventKind kKind{"duplicate-cancelled"};
  bool alert = false;
  std::string reason;
};

// The spare nodes given back (records::SparesDropped): what the job could not get.
struct SparesDropped {
  static constexpr EventKind kKind{"spares-dropped"};
  std::string shortfall, reason;
};

// A job is being cancelled (records::CancelIntent), under the lease.
struct Cancelling {
  static constexpr EventKind kKind{"cancelling"};
  bool fenced = true;
};

// A checkpoint moved aside (records::Quarantined): where it is now ("" when it could not be moved).
struct CheckpointQuarantined {
  static constexpr EventKind kKind{"checkpoint-quarantined"};
  std::string detail;
};

#define MLSUP_FACT_EVENTS(X) \
  X(Submitted)               \
  X(Adopted)                 \
  X(Excluded)                \
  X(ExclusionLifted)         \
  X(ExclusionMoved)          \
  X(AttemptEnded)            \
  X(Completed)               \
  X(Stopped)                 \
  X(ExclusionsRelaxed)       \
  X(PendingStuck)            \
  X(Claimed)                 \
  X(ChainExhausted)          \
  X(CampaignResumed)         \
  X(CampaignPaused)          \
  X(CancelRequested)         \
  X(Unexcluded)              \
  X(RequestRefused)          \
  X(JobHeld)                 \
  X(JobReleased)             \
  X(SbatchAwaited)           \
  X(SbatchEnded)             \
  X(KillSwitchSet)           \
  X(KillSwitchCleared)       \
  X(DuplicateCancelled)      \
  X(SparesDropped)           \
  X(Cancelling)              \
  X(CheckpointQuarantined)

MLSUP_FACT_EVENTS(MLSUP_FIELDS_JSON_DECLARE)

}  // namespace mlsup::events
