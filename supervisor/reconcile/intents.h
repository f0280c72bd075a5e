#pragma once
// What a reconcile pass decided: one intent per act. act.cpp carries each out as intent record ->
// side effect -> fact record, and tells of the fact; nothing here has been done yet.
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "checkpoint/checkpoints.h"
#include "state/lifecycle.h"
#include "decide/blame.h"
#include "decide/first_evidence.h"
#include "decide/chain_tasks.h"
#include "decide/gpu_identity.h"
#include "events/kinds.h"
#include "state/records.h"
#include "state/state.h"
#include "render/spares.h"
#include "slurm_model/types.h"

namespace mlsup::engine {

namespace intent {

// Tell people (an event, no record).
struct Report {
  events::EventKind event;
  nlohmann::json fields;
};

// Delete checkpoints that retention no longer needs (the resume point is never among them).
struct Prune {
  std::vector<checkpoint::Checkpoint> old;
};

// Start attempt N: journal its intent, then submit it, or hand it to the chain's queued task.
struct Submit {
  int attempt = 0;
  std::string tag;
  std::string resume_from;
  long long resume_step = 0;
  std::vector<std::string> exclude;
  std::optional<slurm::Job> queued;         // chain mode: the task that runs it
  std::optional<slurm::JobId> chain_job;    // chain mode: the array
  std::vector<std::string> before;          // chain mode: the previous attempt's exclusions
  std::optional<slurm::JobId> in_job;       // spare nodes: the running job that runs it, on step_nodes
  std::vector<std::string> step_nodes;
  std::optional<slurm::JobId> stop_job;     // spare nodes: the previous job, which cannot run it, ends
  long long signal_lead = 0;                // seconds, sized from the measured pace (signal_lead: auto); 0 = the config's
  std::string debug;                        // why it runs with debug_on_retry.env ("" = it does not)
};

// sbatch for an attempt whose intent is journaled and that no job carries yet.
struct Send {
  AttemptState attempt;
};

// A job with the attempt's tag exists: it is the attempt's.
struct Adopt {
  int attempt = 0;
  slurm::JobId job_id = 0;
  bool chain = false;
  bool held = false;  // it waits held, as mlsup submits: released once adopted
};

// An earlier supervisor's sbatch for the attempt may still submit: nothing is submitted meanwhile
// (journaled once, so that it is told once).
struct AwaitSbatch {
  int attempt = 0;
  SbatchRun run;
  std::string reason;
};

// That sbatch can submit no more: it ended, or it is ended now (kill: its process group, on this
// host, past its deadline); the attempt is submitted again unless its job appears.
struct EndSbatch {
  int attempt = 0;
  SbatchRun run;
  bool kill = false;
  std::string reason;
};

// A job that carries an attempt's tag but is not the one the journal names for it (an sbatch whose
// outcome was unknown, a supervisor that lost its lease), or the attempt's own job alive again after
// its ending (a controller that lost its state): cancelled, and journaled as a duplicate.
struct CancelDuplicate {
  int attempt = 0;
  slurm::Job job;
  slurm::JobId attempt_job = 0;  // the attempt's own job, as the journal names it
  bool revived = false;          // it is that job, alive again after the attempt ended (a controller's lost state)
};

// Keep a node out of the next attempts.
struct Exclude {
  int attempt = 0;
  decide::Blamed blamed;
  double until = 0;  // wall time
  decide::FirstEnd first_end;  // blamed by the first-evidence rule: the failure that named it
  std::string rule;            // blamed by an evidence rule: "evidence:<its name>" ("" = none)
  std::vector<std::string> gpus;  // the UUIDs of its GPUs held responsible ([] = none known)
};

// An excluded node's GPUs are in another node now: the exclusion follows them.
struct MoveExclusion {
  int attempt = 0;  // whose job showed them there
  decide::GpuMove move;
};

// The failure follows the training, not a node: lift the first-evidence rule's exclusions of nodes.
struct Lift {
  int attempt = 0;
  std::vector<std::string> nodes;
  decide::TrainingFault fault;
};

// The attempt ended: the `ended` record's fields, and the job's output for the event.
struct End {
  records::Ended ended;
  std::string output;
};

// Move the checkpoint the attempt resumed from aside (checkpoint.dir/.quarantine/), after attempts failed
// before any step from it; never deleted.
struct Quarantine {
  int attempt = 0;
  std::string path;
  long long step = 0;
  std::string reason;
};

// The campaign ends (after the chain's remaining tasks are cancelled, when there are some).
struct Finish {
  int code = 0;
  std::string reason;
  std::optional<std::pair<int, slurm::JobId>> cancel_chain;  // attempt, array
};

// The attempt hangs: keep evidence, probe its nodes, blame, cancel.
struct Hang {
  AttemptState attempt;
  slurm::Job job;
  std::string reason;
  long long steady_timeout = 0;  // seconds, as calibrated
  bool calibrated = false;
  std::vector<decide::StaleNode> stale;
  // The timeout has not run out, but the other ranks wait on the stale nodes; it is a hang only if
  // a probe proves one of them silent.
  bool waited_on = false;
};

// Give up on the attempt: fence it, journal the cancel's intent and send it.
struct Cancel {
  AttemptState attempt;
  decide::EndClass why = decide::EndClass::Failed;
  std::string reason;
  bool steps_only = false;  // spare nodes: kill the attempt's run (the job's steps); the job runs the next
  std::optional<CancelEvidence> evidence;  // a hang's: the evidence rule its output matched
};

// Spare nodes: the job took the attempt (its claim).
struct StepClaimed {
  int attempt = 0;
  render::SpareClaim claim;
};

// Spare nodes: the attempt's values for the job that runs it (next.env), again until it is claimed.
struct SpareValues {
  AttemptState attempt;
};

// Send an intended cancel again: the job is still there.
struct ResendCancel {
  AttemptState attempt;
  decide::EndClass why = decide::EndClass::Failed;
};

// Drop the oldest exclusion of a job left pending for missing nodes.
struct Relax {
  AttemptState attempt;
  slurm::Job job;
  std::string node;
  std::vector<std::string> keep;  // its ExcNodeList without node
};

// Spare nodes: the pending job cannot get its N+K nodes; it asks for the training's N only (nodes).
struct DropSpares {
  AttemptState attempt;
  slurm::Job job;
  int nodes = 0;
  std::string shortfall;  // why: what the partition cannot give
};

// Tell people the pending job waits for something waiting does not end.
struct PendingAlert {
  int attempt = 0;
  slurm::Job job;
  double waited = 0;
  bool never_starts = false;  // the request cannot start as asked (decide::never_starts): told at once
};

// Chain mode: a task claimed the attempt.
struct Claimed {
  int attempt = 0;
  slurm::JobId array = 0;
  Claim claim;
};

// Chain mode: keep the attempt's exclusions on the array's queued tasks.
struct PatchQueued {
  AttemptState attempt;
  slurm::Job queued;
  std::vector<std::string> before;
};

// Chain mode: the array has no task left for the attempt; a new one is submitted under new_tag.
struct ChainExhausted {
  int attempt = 0;
  slurm::JobId array = 0;
  std::string new_tag;
};

// Chain mode: the values the next task takes (next.env).
struct ChainValues {
  AttemptState attempt;
  std::string resume_from;
};

// status.json, for people: the campaign and the job as this pass saw it.
struct Status {
  slurm::Job job;
};

// A lifecycle verb's request (state/lifecycle.h): journaled (or its refusal), then its file removed.
struct TakeRequest {
  Request request;
  std::optional<Refusal> refused;  // the state no longer allows it (changed since the verb looked)
  bool done = false;               // the journal has it already: only its file is removed
};

// A pause, or the window closed: hold the attempt's queued job.
struct Hold {
  AttemptState attempt;
  slurm::JobId job_id = 0;
  std::string why = "pause";  // "pause" or "window"
};

// The pause is over: release the attempt's held job.
struct Release {
  AttemptState attempt;
  slurm::JobId job_id = 0;
};

// Ask the running training to save and exit through the kill switch (a pause --now, a cancel, the window's end).
struct AskToStop {
  AttemptState attempt;
  std::string why;  // "pause", "cancel" or "window"
};

// The window opened again: the kill switch mlsup set at its end is removed before the next attempt.
struct ClearSwitch {
  AttemptState attempt;
};

}  // namespace intent

using Intent = std::variant<intent::Report, intent::Prune, intent::Submit, intent::Send, intent::Adopt, intent::Exclude,
                            intent::End, intent::Finish, intent::Hang, intent::Cancel, intent::ResendCancel,
                            intent::Relax, intent::PendingAlert, intent::Claimed, intent::PatchQueued,
                            intent::ChainExhausted, intent::ChainValues, intent::Status, intent::TakeRequest,
                            intent::Hold, intent::Release, intent::AskToStop, intent::Lift, intent::ClearSwitch,
                            intent::StepClaimed, intent::SpareValues, intent::AwaitSbatch, intent::EndSbatch,
                            intent::CancelDuplicate, intent::DropSpares, intent::Quarantine, intent::MoveExclusion>;

}  // namespace mlsup::engine
