#pragma once
// The campaign as its journal tells it: rebuilt from the records on every pass (level-based), so a
// restarted supervisor knows exactly what the one before it did and intended.
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "decide/blame.h"
#include "decide/classify.h"
#include "decide/first_evidence.h"
#include "decide/ledger.h"
#include "decide/policy.h"
#include "decide/submit_retry.h"
#include "slurm_model/types.h"
#include "util/error.h"
#include "util/journal_record.h"

namespace mlsup::engine {

// An sbatch of the attempt, as its supervisor recorded it once it ran: enough to tell, from the same
// host, whether it still runs (and may still submit), and from another, when its deadline is over.
struct SbatchRun {
  int pid = 0;
  long long start_ticks = 0;  // its start in clock ticks since boot (/proc/PID/stat), which a reused pid does not share
  std::string host, boot_id;
  double time = 0;            // the record's time (the writer's wall clock)
  double server_time = 0;     // the file server's clock then (0: not known)
  bool operator==(const SbatchRun&) const = default;
};

// The evidence rule that explained a hang from the job's output when it was cancelled (its finding's words).
struct CancelEvidence {
  std::string rule, cls, action, quote;
  int line = 0;
  bool operator==(const CancelEvidence&) const = default;
};

struct AttemptState {
  int number = 0;
  std::string tag;                      // the job's --comment
  std::string resume_from;              // the checkpoint it was given; "" = fresh start
  long long resume_step = 0;            // that checkpoint's step
  std::vector<std::string> exclude;     // mlsup's exclusions for it, newest first (relaxed ones removed)
  long long signal_lead = 0;            // seconds, sized for it from the measured pace; 0 = the config's
  std::string debug;                    // why it runs with debug_on_retry.env ("" = it does not)
  double relaxed_at = 0;                // when one of them was last dropped while it was pending
  int relaxed = 0;                      // how many of them were dropped while it was pending
  double intent_time = 0;               // when the submission was decided
  std::optional<slurm::JobId> job_id;   // once submitted (or adopted); in chain mode the array's id
  std::vector<decide::SubmitFailure> submit_failures;  // sbatch failures since its last submission went through
  int failed_submissions = 0;           // sbatch failures for it in all, those before a success included
  int submissions = 0;                  // sbatch calls that went through for it (not adoptions, not chain hand-overs)
  bool chain = false;                   // a task of a job array (chain mode) runs this attempt
  std::optional<slurm::JobId> task_job_id;  // chain mode: the task that claimed the attempt
  bool in_job = false;                  // spare nodes: handed to the job of the attempt before, still running
  bool step_claimed = false;            // spare nodes: the job took it (its claim names the job and the nodes)
  std::vector<std::string> step_nodes;  // spare nodes: the nodes it runs on, from the claim
  bool steps_only = false;              // spare nodes: mlsup ended its run (killed its steps), not the job
  std::optional<decide::EndClass> cancel_reason;  // mlsup asked Slurm to cancel it, and why
  std::optional<CancelEvidence> cancel_evidence;  // a hang's: the evidence rule its output matched then
  bool pending_alerted = false;                   // people were told it is stuck pending
  bool held = false;                    // mlsup holds its pending job (a pause, or its submission until journaled)
  std::string held_for;                 // why: "pause", "window" or "submission"
  std::optional<SbatchRun> sbatch;      // an sbatch for it that ran and whose end no record tells yet
  int sbatch_awaited = 0;               // the pid of an earlier supervisor's sbatch that this one waits for (0: none)
  bool uncertain = false;               // an sbatch for it ended unseen (its job may appear late: a duplicate)
  bool spares_dropped = false;          // spare nodes: its pending job was made to ask for the training's nodes only
  double switch_set_at = 0;             // when mlsup set the kill switch for it (a pause --now, a cancel); 0: not
  std::string switch_for;               // and why: "pause", "cancel", "window"
  bool ended = false;
  std::optional<decide::EndClass> end_class;
  long long end_step = -1;
  bool progressed = false;              // it got past the step it resumed from
  bool explained = false;               // an evidence rule read its failure from its output
  // What the read-only verbs show of it, from its records (wall times, the records' own; 0: none):
  double submitted_at = 0;          // its first submitted (or adopted) record
  double ended_at = 0;              // its ended record (the last, were there several)
  bool step_times = false;          // that record told its step times (an older mlsup's did not)
  double first_step_at = 0;         // then: its first step past its resume point (0: none)
  double last_progress_at = 0;      // then: its heartbeat's last progress (0: none)
  std::string end_slurm_state;      // Slurm's state at its end, as recorded
  std::string end_nodes;            // Slurm's host list at its end
};

// The attempts a supervisor no longer holds (it keeps the newest: Actor::state), as status counts
// them: how many, and their time figures (views/status_view.h) summed once each was final.
struct EarlierAttempts {
  int count = 0;
  double useful = 0, lost = 0;
  long long recomputed = 0;
};

struct CampaignState {
  std::string campaign_id;
  std::vector<AttemptState> attempts;     // every attempt, oldest first; a supervisor's: its newest (earlier below)
  EarlierAttempts earlier;                // the attempts dropped before those (none in a whole replay)
  std::vector<decide::Restart> restarts;  // every resubmission decided, oldest first; a supervisor's: those that
                                          // may still weigh in a decision (decide::compact_restarts) ...
  std::vector<decide::RestartCount> restarts_earlier;  // ... and the others, counted by class
  std::vector<decide::Exclusion> ledger;  // every node exclusion recorded, expired ones included
  std::vector<int> ledger_attempts;       // per ledger entry: the attempt it was recorded for (0: not said)
  std::vector<decide::PastFailure> failures;  // attempts that failed or hung, with their nodes
  std::vector<decide::RuleExclusion> rule_exclusions;  // ledger entries the first-evidence rule made
  std::vector<decide::TrainingFault> training_faults;  // failures found to follow the training, not a node
  double next_submit_at = 0;              // backoff: no submission before this time
  // The newest checkpoint an attempt resumed from and got past (its heartbeat or a newer checkpoint):
  // known good, so retention keeps it until a newer one is shown good the same way. "" = none yet.
  std::vector<std::string> quarantined;  // checkpoints moved aside (their paths where they were), oldest first
  int quarantined_in_a_row = 0;          // of them, since an attempt last got past its resume point
  std::string proven_checkpoint;
  long long proven_step = -1;
  bool awaiting_submit = false;           // the last attempt ended and a resubmission was decided
  std::optional<int> finished_code;       // the campaign ended with this exit code
  std::string finished_reason;
  // The lifecycle verbs (state/lifecycle.h): the requests journaled, and what they left standing.
  std::set<std::string> requests_done;    // ids of the request files already journaled
  bool paused = false;                    // `mlsup pause`: nothing new starts until `mlsup resume`
  bool pause_now = false;                 // ... and the training is asked to save and exit
  bool cancel_requested = false;          // `mlsup cancel`: the campaign ends as soon as its job is gone
  std::string resume_point;               // `mlsup resume --from`: the next submission's checkpoint; "" = newest
  long long resume_point_step = 0;
  double began = 0;                       // the journal's first record's time
  double finished_at = 0;                 // the last `finished` record's time (0: none)
  // Records that could not be applied (a field of the wrong type), each as file:line and what to do.
  // While there is one, the state above is incomplete and nothing may be decided from it.
  std::vector<util::Error> problems;

  // The newest attempt, or nullptr before the first.
  const AttemptState* current() const { return attempts.empty() ? nullptr : &attempts.back(); }
};

using JournalRecord = util::JournalRecord;

// Rebuilds the campaign from its journal records (those of the journal at path), in order. Never throws:
// a record that cannot be applied is left out and listed in problems with path and line; the engine
// then acts on nothing (acting on a state that lacks a record could submit twice), while `status`
// and `events` still show what there is.
CampaignState replay(const std::vector<JournalRecord>& records, const std::string& path = "");

// Applies one more record to s (replay is this, record after record): a supervisor keeps its state
// and applies only what the journal gained since.
void apply(CampaignState& s, const JournalRecord& r, const std::string& path = "");

// What a round of a pass changed, as far as a second round in the same pass depends on it.
struct Progress {
  bool awaiting_submit = false;
  int attempt = 0;                   // the newest attempt's number (0: none)
  std::size_t submit_failures = 0;   // its failed sbatches
};
Progress progress(const CampaignState& s);

}  // namespace mlsup::engine
