#pragma once
// One struct per journal record, its type's name beside it, and its JSON both ways. The journal keeps a
// record as {"type": kType, ...its fields}; replay (state.cpp) reads each through from_json, with the
// defaults below for a field an older mlsup did not write, and the actor writes each through to_json.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "decide/classes.h"
#include "decide/classify.h"
#include "slurm_model/types.h"
#include "util/json_fields.h"

namespace mlsup::engine::records {

// The campaign's identity, its first record.
struct Campaign {
  static constexpr std::string_view kType = "campaign";
  std::string id, name;
};

// A submission decided, before sbatch (or the hand-over to a queued chain task, or to a running spare-node job).
struct SubmitIntent {
  static constexpr std::string_view kType = "submit-intent";
  int attempt = 0;
  std::string tag, resume_from;
  long long resume_step = 0;
  std::vector<std::string> exclude;
  bool chain = false;                   // chain mode: handed to a queued task
  slurm::JobId chain_job = 0;           // that task's array (0: sbatch)
  slurm::JobId in_job = 0;              // spare nodes: the running job that runs it (0: sbatch)
  std::vector<std::string> step_nodes;  // spare nodes: the nodes it runs on there
  long long signal_lead = 0;            // seconds, sized from the measured pace (signal_lead: auto); 0 = the config's
  std::string debug;                    // why it runs with debug_on_retry.env ("" = it does not)
};

// sbatch gave the attempt a job (submitted), or a job with its tag was found (adopted).
struct Submitted {
  static constexpr std::string_view kType = "submitted";
  int attempt = 0;
  slurm::JobId job_id = 0;
  std::optional<bool> chain;  // a job array (absent: as the attempt's intent said)
  bool held = false;          // submitted held: released once journaled
};
struct Adopted : Submitted {
  static constexpr std::string_view kType = "adopted";
};

// sbatch failed (kind: slurm::ErrorKind's name; outcome: "refused", or "unknown" when a job may exist).
struct SubmitFailed {
  static constexpr std::string_view kType = "submit-failed";
  int attempt = 0;
  slurm::ErrorKind kind = slurm::ErrorKind::Other;
  int code = 0;
  std::string message, outcome;
};

// The sbatch that runs for the attempt: enough for a later supervisor to tell whether it still runs.
struct SbatchStarted {
  static constexpr std::string_view kType = "sbatch-started";
  int attempt = 0;
  int pid = 0;
  long long start_ticks = 0;
  std::string host, boot_id;
  std::optional<double> server_time;  // the file server's clock then, when known
};

// An earlier supervisor's sbatch is waited for (awaited), or its end is known (ended; killed: by this one).
struct SbatchAwaited {
  static constexpr std::string_view kType = "sbatch-awaited";
  int attempt = 0;
  int pid = 0;
  std::string host;
};
struct SbatchEnded {
  static constexpr std::string_view kType = "sbatch-ended";
  int attempt = 0;
  int pid = 0;
  bool killed = false;
};

// Spare nodes: the pending job was made to ask for the training's nodes only.
struct SparesDropped {
  static constexpr std::string_view kType = "spares-dropped";
  int attempt = 0;
  slurm::JobId job_id = 0;
  int nodes = 0;
};

// mlsup is about to cancel the attempt's job (steps_only: spare nodes, its run's steps only), and why.
struct CancelIntent {
  static constexpr std::string_view kType = "cancel-intent";
  int attempt = 0;
  slurm::JobId job_id = 0;
  std::optional<decide::EndClass> cls;
  std::string reason;
  bool steps_only = false;
  // A hang's: the evidence rule that explained it from the output then ("" = none), as an ended record tells one.
  std::string evidence_rule, evidence_class, evidence_action, evidence_quote;
  int evidence_line = 0;
};

// People were told the attempt's job is stuck pending.
struct PendingAlert {
  static constexpr std::string_view kType = "pending-alert";
  int attempt = 0;
  slurm::JobId job_id = 0;
  std::string reason;  // Slurm's
};

// An attempt ended: what ended, how it is classed, how far it got, what was decided and why.
struct Ended {
  static constexpr std::string_view kType = "ended";
  int attempt = 0;
  slurm::JobId job_id = 0;
  std::optional<decide::EndClass> cls;
  slurm::JobState slurm_state = slurm::JobState::Unknown;
  int exit_code = 0, signal = 0;
  std::string nodes;  // Slurm's host list
  long long step = -1, checkpoint_step = 0;
  std::string resumed_from;
  bool progressed = false;
  std::optional<decide::Action> action;
  double delay = 0;  // before the next submission
  std::string reason;
  std::optional<std::vector<std::string>> suspects;  // the nodes the evidence points at (node-related endings)
  bool follows_training = false;      // the failure follows the training, not a node
  bool new_exclusion = false;         // the decision excluded a node not excluded before
  std::string end_source;             // where the ending was read when not from Slurm's job record ("" = there)
  double first_step_at = 0;           // wall: its heartbeat's first step past its resume point (0: none seen)
  double last_progress_at = 0;        // wall: its heartbeat's last progress (0: none seen)
  // The evidence rule that explained a failure from its output's tail ("" = none): its class, action,
  // the line's number in the tail read and the line; no_node_blamed: its finding held no node responsible.
  std::string evidence_rule, evidence_class, evidence_action, evidence_quote;
  int evidence_line = 0;
  bool no_node_blamed = false;
  // What the evidence showed, as told in the event: first_failure, first_reported, victims, health_failed.
  nlohmann::json evidence = nlohmann::json::object();
};

// The campaign ended with this exit code.
struct Finished {
  static constexpr std::string_view kType = "finished";
  int code = 0;
  std::string reason;
};

// An exclusion dropped from a pending job.
struct Relaxed {
  static constexpr std::string_view kType = "relaxed";
  int attempt = 0;
  slurm::JobId job_id = 0;
  std::string node;
};

// Chain mode: a task took the attempt (how: "values" as mlsup wrote them, or "fallback": found by itself).
struct Claimed {
  static constexpr std::string_view kType = "claimed";
  int attempt = 0;
  slurm::JobId job_id = 0;
  std::string task, how;
  std::optional<std::string> resume_from;  // what the task resumed from
};

// Spare nodes: the job took the attempt, on these nodes.
struct StepClaimed {
  static constexpr std::string_view kType = "step-claimed";
  int attempt = 0;
  slurm::JobId job_id = 0;
  std::vector<std::string> nodes;
};

// Chain mode: no task was left to run the attempt; it is submitted again under a new tag.
struct ChainExhausted {
  static constexpr std::string_view kType = "chain-exhausted";
  int attempt = 0;
  slurm::JobId job_id = 0;
  std::optional<std::string> tag;  // the new tag
};

// A lifecycle verb's request taken: which, its verb's name, who asked.
struct Asked {
  std::string request, verb, by;
};
// `mlsup resume` (from: a checkpoint to resume from, "" = the newest).
struct Resumed : Asked {
  static constexpr std::string_view kType = "resumed";
  std::string from;
  long long from_step = 0;
};
// `mlsup pause` (now: the running job is asked to stop too).
struct Paused : Asked {
  static constexpr std::string_view kType = "paused";
  bool now = false;
};
struct CancelRequested : Asked {
  static constexpr std::string_view kType = "cancel-requested";
};
// `mlsup unexclude`: the node's live exclusions end now (why: the person's reason).
struct Unexcluded : Asked {
  static constexpr std::string_view kType = "unexcluded";
  std::string node, why;
};
// A request that does not apply now (code: the verb's exit code).
struct RequestRefused : Asked {
  static constexpr std::string_view kType = "request-refused";
  int code = 0;
  std::string reason;
};

// mlsup holds the attempt's pending job (for: "pause", "window"), or released it ("submission" once journaled).
struct Held {
  static constexpr std::string_view kType = "held";
  int attempt = 0;
  slurm::JobId job_id = 0;
  std::string for_ = "pause";
};
struct Released {
  static constexpr std::string_view kType = "released";
  int attempt = 0;
  slurm::JobId job_id = 0;
  std::string for_;  // "" for a pause's end
};

// The kill switch set for the attempt (for: "pause", "cancel", "window"), or cleared (removed: it was mlsup's).
struct SwitchSet {
  static constexpr std::string_view kType = "switch-set";
  int attempt = 0;
  std::string for_;
};
struct SwitchCleared {
  static constexpr std::string_view kType = "switch-cleared";
  int attempt = 0;
  bool removed = false;
};

// A node excluded until a wall time; by the first-evidence rule, with the failure that named it.
struct Exclude {
  static constexpr std::string_view kType = "exclude";
  int attempt = 0;  // for status only: one an older journal wrote badly reads as 0
  std::string node, reason;
  double until = 0;
  std::string rule;  // "first_evidence" for the first-evidence rule's, with the failure's rank and step
  int rank = -1;
  long long step = 0;
  std::vector<std::string> gpus;  // the UUIDs of the node's GPUs it holds responsible (the plugin's records; [] = none known)
  bool first_evidence() const { return rule == "first_evidence"; }
};

// An excluded node's GPUs found all in another node (a board moved, a node renamed): its exclusions end,
// and the other node is excluded until the same time.
struct ExclusionMoved {
  static constexpr std::string_view kType = "exclusion-moved";
  int attempt = 0;  // the attempt whose job showed them there
  std::string from, to;
  std::vector<std::string> gpus;
  double until = 0;
  std::string reason;
};

// A failure follows the training: the first-evidence rule's exclusions of these nodes end.
struct ExclusionLifted {
  static constexpr std::string_view kType = "exclusion-lifted";
  int attempt = 0;
  std::vector<std::string> lifted;
  int rank = -1;
  long long step = 0, tolerance = 0;
  std::string reason;
};

// A job with the attempt's tag that its journal does not name, cancelled (state: Slurm's when found).
struct DuplicateCancelled {
  static constexpr std::string_view kType = "duplicate-cancelled";
  int attempt = 0;
  slurm::JobId job_id = 0;
  std::string state;
  slurm::JobId attempt_job = 0;
  bool revived = false;
};

// A checkpoint moved aside after attempts failed before any step from it (path: where it was; to: where it is).
struct Quarantined {
  static constexpr std::string_view kType = "quarantined";
  int attempt = 0;
  std::string path, to;
  long long step = 0;
  std::string reason;
};

// Every record but Ended (whose evidence is JSON of its own), for what is written once per record.
#define MLSUP_PLAIN_RECORDS(X) \
  X(Campaign) \
  X(SubmitIntent) \
  X(Submitted) \
  X(Adopted) \
  X(SubmitFailed) \
  X(SbatchStarted) \
  X(SbatchAwaited) \
  X(SbatchEnded) \
  X(SparesDropped) \
  X(CancelIntent) \
  X(PendingAlert) \
  X(Finished) \
  X(Relaxed) \
  X(Claimed) \
  X(StepClaimed) \
  X(ChainExhausted) \
  X(Resumed) \
  X(Paused) \
  X(CancelRequested) \
  X(Unexcluded) \
  X(RequestRefused) \
  X(Held) \
  X(Released) \
  X(SwitchSet) \
  X(SwitchCleared) \
  X(Exclude) \
  X(ExclusionLifted) \
  X(ExclusionMoved) \
  X(DuplicateCancelled) \
  X(Quarantined)

MLSUP_PLAIN_RECORDS(MLSUP_FIELDS_JSON_DECLARE)
MLSUP_FIELDS_JSON_DECLARE(Ended)

}  // namespace mlsup::engine::records
