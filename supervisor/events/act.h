#pragma once
// One struct per event that carrying out an intent tells (the actor, the template's keeper, a reload): its
// kind beside it and its JSON both ways (act.cpp). What reconcile tells is in reconcile.h.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "events/kinds.h"
#include "slurm_model/types.h"
#include "util/json_fields.h"

namespace mlsup::events {

// Something failed and is tried again next pass: what, and what is decided.
struct JobActFailed {
  int attempt = 0;
  slurm::JobId job_id = 0;
  std::string detail, decision;
};
struct ReleaseFailed : JobActFailed {
  static constexpr EventKind kKind{"release-failed"};
};
struct HoldFailed : JobActFailed {
  static constexpr EventKind kKind{"hold-failed"};
};
struct DuplicateCancelFailed : JobActFailed {
  static constexpr EventKind kKind{"duplicate-cancel-failed"};
};
struct SparesDropFailed : JobActFailed {
  static constexpr EventKind kKind{"spares-drop-failed"};
};
struct StepsKillFailed : JobActFailed {
  static constexpr EventKind kKind{"steps-kill-failed"};
};

// Retention deleted a checkpoint (or could not: reason says).
struct CheckpointDeleted {
  static constexpr EventKind kKind{"checkpoint-deleted"};
  std::string path;
  long long step = 0;
  std::string reason;
};

// The template does not render (attempt: the submission that needed it; none when it was looked at).
struct TemplateUnusable {
  static constexpr EventKind kKind{"template-unusable"};
  std::optional<int> attempt;
  std::string file, detail;
  bool alert = true;
  std::string decision;
};

// The template's stored copy could not be updated.
struct TemplateSnapshotFailed {
  static constexpr EventKind kKind{"template-snapshot-failed"};
  std::string detail, decision;
};

// A submission waited for its turn (run/tick --submit-rate).
struct SubmitPaced {
  static constexpr EventKind kKind{"submit-paced"};
  int attempt = 0;
  double waited = 0;
  std::string reason;
};

// sbatch failed: retried, or the campaign ends.
struct SubmitFailed {
  static constexpr EventKind kKind{"submit-failed"};
  int attempt = 0;
  std::string kind, detail;  // kind: slurm::ErrorKind's name
  bool transient = false;
  int tries = 0;
  bool alert = false;
  std::string outcome, decision;  // outcome: "refused", or "unknown" when a job may exist
  double next_try = 0;
  std::string reason;
};

// The rest of a chain (or the spare-node job that would run the next attempt) was cancelled.
struct ChainCancelled {
  static constexpr EventKind kKind{"chain-cancelled"};
  int attempt = 0;
  slurm::JobId job_id = 0;
  std::string detail;
};

// An exclusion could not be lifted from a waiting job.
struct RelaxFailed {
  static constexpr EventKind kKind{"relax-failed"};
  int attempt = 0;
  slurm::JobId job_id = 0;
  std::string node, detail, decision;
};

// The chain's next.env (or the spare nodes' values) could not be written.
struct ChainValuesFailed {
  static constexpr EventKind kKind{"chain-values-failed"};
  int attempt = 0;
  std::string detail;
};
struct SpareValuesFailed {
  static constexpr EventKind kKind{"spare-values-failed"};
  int attempt = 0;
  slurm::JobId job_id = 0;
  std::string detail;
};

// The next attempt handed to the chain's queued task (exc_node_list: its list read back) or to the
// running job's spare nodes (nodes, steps_killed).
struct HandedOver {
  static constexpr EventKind kKind{"handed-over"};
  int attempt = 0;
  slurm::JobId job_id = 0;
  std::optional<std::vector<std::string>> nodes;
  std::string resume_from;
  std::vector<std::string> exclude;
  std::optional<std::string> steps_killed, exc_node_list;
  std::string reason;
};

// The chain's queued task was given the nodes excluded since.
struct ChainExcluded {
  static constexpr EventKind kKind{"chain-excluded"};
  int attempt = 0;
  slurm::JobId job_id = 0;
  std::string exc_node_list;
};

// The hang command's output was saved.
struct HangEvidence {
  static constexpr EventKind kKind{"hang-evidence"};
  int attempt = 0;
  slurm::JobId job_id = 0;
  std::string path, outcome;
};

// Every rank was asked for its Python stacks at a hang: where they stopped, and whom the others wait on.
struct HangStacks {
  static constexpr EventKind kKind{"hang-stacks"};
  int attempt = 0;
  slurm::JobId job_id = 0;
  std::string folder;
  int ranks = 0, dumped = 0;          // the ranks' files, and how many dumped in time
  std::vector<std::string> places;    // "ranks 0-2: file:line in function", the most ranks first
  std::vector<std::string> waited_on; // the ranks singled out
  std::vector<std::string> nodes;     // their nodes
  std::string why;
};

// One process of the job at a hang, as the node dump saw it (observe/node_dump.h).
struct DumpedProcess {
  int pid = 0;
  std::string rank, state, wchan, comm, by;
  int frames = 0;
  std::string flight_recorder;  // the NCCL flight recorder's dump asked for ("" = none)
  bool operator==(const DumpedProcess&) const = default;
};
// One node's part of the dump: where its file is, the tool it had, its processes.
struct DumpedNode {
  std::string node, tool, file;
  bool complete = false;
  std::vector<DumpedProcess> processes;
  bool operator==(const DumpedNode&) const = default;
};
// A hang without the helper's stacks: what the job's processes were doing on each node that answered.
struct HangDump {
  static constexpr EventKind kKind{"hang-dump"};
  int attempt = 0;
  slurm::JobId job_id = 0;
  std::string folder, outcome;
  std::vector<DumpedNode> dumps;
  std::vector<std::string> missing;  // nodes asked that printed nothing
  std::vector<std::string> summary;  // "n1: pid 12 rank 0 python3 T do_signal_stop (gdb: 14 frames)"
};

// A hung job's output matched an evidence rule before the cancel: the line, the node it names, and
// what that changed in the hang's blame.
struct HangExplained {
  static constexpr EventKind kKind{"hang-explained"};
  int attempt = 0;
  slurm::JobId job_id = 0;
  std::string rule, cls;
  int line = 0;            // in the output's tail read
  std::string quote;
  std::string node;        // the node its line names ("" = none)
  std::string decision;
};

// Nodes did not answer a probe step, but the verdict doubts it (proven: those taken as silent).
struct ProbeDoubted {
  static constexpr EventKind kKind{"probe-doubted"};
  int attempt = 0;
  slurm::JobId job_id = 0;
  std::vector<std::string> unanswered, proven;
  std::string reason;
};

// The nodes a hang was blamed on answered a probe step.
struct ProbeAnswered {
  static constexpr EventKind kKind{"probe-answered"};
  int attempt = 0;
  slurm::JobId job_id = 0;
  std::vector<std::string> nodes;
  std::string reason;
};

// A job made no progress for the hang timeout.
struct HangDetected {
  static constexpr EventKind kKind{"hang-detected"};
  int attempt = 0;
  slurm::JobId job_id = 0;
  std::string reason;
  std::vector<std::string> probing;
  std::string steady_timeout;
  bool calibrated = false;
};

// One node's heartbeat stopped before the others' (lead: seconds before the newest change elsewhere).
struct StaleLead {
  std::string node;
  double lead = 0;
  bool operator==(const StaleLead&) const = default;
};
struct HeartbeatStaleFirst {
  static constexpr EventKind kKind{"heartbeat-stale-first"};
  int attempt = 0;
  slurm::JobId job_id = 0;
  std::vector<StaleLead> nodes;
  double margin = 0;
};

// A lifecycle request could not be carried out.
struct RequestFailed {
  static constexpr EventKind kKind{"request-failed"};
  std::string request, verb, detail, decision;
};

// A switch file could not be written or removed.
struct SwitchFailed {
  static constexpr EventKind kKind{"switch-failed"};
  int attempt = 0;
  std::string switch_, detail, decision;
};

// scancel failed, or the job is still there after it.
struct CancelFailed {
  static constexpr EventKind kKind{"cancel-failed"};
  int attempt = 0;
  slurm::JobId job_id = 0;
  int sent = 0, failed = 0;
  std::string detail, decision;
  bool alert = false;
};

// A torn last journal line was set aside.
struct JournalRepaired {
  static constexpr EventKind kKind{"journal-repaired"};
  std::string detail;
};

// The config was loaded again (changed: its keys that changed), or its window's zone did not load.
struct ConfigReloaded {
  static constexpr EventKind kKind{"config-reloaded"};
  std::string file;
  std::optional<std::vector<std::string>> changed;
  std::optional<std::string> detail, decision;
};

#define MLSUP_ACT_EVENTS(X)   \
  X(ReleaseFailed)            \
  X(HoldFailed)               \
  X(DuplicateCancelFailed)    \
  X(SparesDropFailed)         \
  X(StepsKillFailed)          \
  X(CheckpointDeleted)        \
  X(TemplateUnusable)         \
  X(TemplateSnapshotFailed)   \
  X(SubmitPaced)              \
  X(SubmitFailed)             \
  X(ChainCancelled)           \
  X(RelaxFailed)              \
  X(ChainValuesFailed)        \
  X(SpareValuesFailed)        \
  X(HandedOver)               \
  X(ChainExcluded)            \
  X(HangEvidence)             \
  X(HangStacks)               \
  X(HangDump)                 \
  X(HangExplained)            \
  X(ProbeDoubted)             \
  X(ProbeAnswered)            \
  X(HangDetected)             \
  X(HeartbeatStaleFirst)      \
  X(RequestFailed)            \
  X(SwitchFailed)             \
  X(CancelFailed)             \
  X(JournalRepaired)          \
  X(ConfigReloaded)

MLSUP_ACT_EVENTS(MLSUP_FIELDS_JSON_DECLARE)
MLSUP_FIELDS_JSON_DECLARE(StaleLead)
MLSUP_FIELDS_JSON_DECLARE(DumpedProcess)
MLSUP_FIELDS_JSON_DECLARE(DumpedNode)

}  // namespace mlsup::events
