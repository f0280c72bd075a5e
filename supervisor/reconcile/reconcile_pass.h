#pragma once
// Inside reconcile: one pass's inputs and the intents it has decided so far (reconcile*.cpp only).
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "checkpoint/retention.h"
#include "events/reconcile.h"
#include "decide/recall.h"
#include "reconcile/reconcile.h"

namespace mlsup::engine {
// The campaign's tags are looked for in the queue (duplicates) every pass while an attempt's sbatch
// ended unseen or after Slurm failed to answer, and every kDuplicateSweep seconds in any case (a
// supervisor that lost the campaign while its sbatch ran leaves a held job no journal names; a
// controller that lost its state may run an ended attempt's job again). The same job query answers it.
inline constexpr double kDuplicateSweep = 10;
bool duplicates_due(const CampaignState& s, const Memory& m, double mono);
// True when the running attempt's checkpoints are due a look again (chain mode: next.env gets the newest;
// checkpoint.keep: the surplus is pruned): every 10 polls, 10 s at least.
bool checkpoints_due(const Memory& m, const config::Config& c, double mono);
// Spare nodes: a run of the script that ended with this status failed, and the job waits for the next
// attempt (0 and the do-not-retry code end the job itself, and are judged from its ending).
inline bool spare_run_failed(int status, const config::Config& c) {
  return status != 0 && status != c.policy.no_retry_exit_code;
}
}  // namespace mlsup::engine

namespace mlsup::engine::reconcile_parts {

struct Pass {
  const CampaignState& s;
  const World& w;
  Memory& m;
  const config::Config& c;
  const std::string& campaign_id;
  std::vector<Intent> out;

  void add(Intent i) { out.push_back(std::move(i)); }
  // Tells an event (events/reconcile.h).
  template <class E>
  void report(const E& e) {
    add(intent::Report{E::kKind, nlohmann::json(e)});
  }
  double wall() const { return w.now.wall; }
  double mono() const { return w.now.mono; }
};

// The job tag of attempt number.
std::string tag(const Pass& p, int number);

// Attempt number is due: submit it, or hand it to the chain's queued task (reconcile.cpp).
void submit(Pass& p, int number);
// The campaign ends; the chain's remaining tasks are cancelled when a has some (ends_now: a ends in this pass).
void finish(Pass& p, int code, const std::string& reason, const AttemptState* a, bool ends_now);

// Notes, when the attempt's heartbeat progressed past its resume point since before, when it did: its first
// step (memory.first_step_at, _wall) and its last progress (last_progress_wall), from the heartbeat files'
// write times (a tick that looks every few minutes still sees when they were written).
void note_step_times(Pass& p, const AttemptState& a, const HeartbeatSeen& before);

// The newest complete checkpoint this pass scanned below step (none: any), leaving out the quarantined ones.
std::optional<checkpoint::Checkpoint> newest_usable(const Pass& p, long long below = -1);

// Deletes checkpoint.keep's surplus of the checkpoints this pass scanned, keeping what needed names, the
// campaign's resume point and proven checkpoint, and what next.env names (checkpoint/retention.h).
void prune(Pass& p, checkpoint::Needed needed);

// A submitted attempt whose job the query answered for (reconcile_watch.cpp).
void watch(Pass& p, const AttemptState& a, const std::vector<slurm::Job>& jobs);
// Its job waits in the queue.
void pending(Pass& p, const AttemptState& a, const slurm::Job& job);

// Its job ended (or Slurm forgot it and no source knows its end: vanished) (reconcile_ending.cpp);
// source names where a forgotten job's end was found ("" when Slurm's controller told it).
// gone: why a forgotten job is known to have stopped (it never started, its processes are gone), "" otherwise.
void end(Pass& p, const AttemptState& a, const slurm::Job& job, bool vanished, bool chain_goes_on = false,
         std::string_view source = "", std::string_view gone = "");

// Slurm's controller no longer knows the job: its end from accounting, the plugin's record of the
// batch script or the script's end record, in that order; none knows: the campaign is held (ending
// class end_unknown). While accounting does not answer, nothing is decided.
void forgotten(Pass& p, const AttemptState& a, slurm::JobId id);
// No source knows how that job ended: it never started, or it ran and its processes are shown gone
// (resubmitted, class forgotten); otherwise it is waited for, or (no heartbeat) the campaign stops.
void unrecalled(Pass& p, const AttemptState& a, slurm::JobId id, const decide::Witnesses& seen);

// Chain mode: an attempt handed to the array that no task has claimed yet (reconcile_chain.cpp).
void watch_chain(Pass& p, const AttemptState& a, const std::vector<slurm::Job>& jobs);

// Spare nodes (reconcile_spares.cpp): an attempt whose job runs: its claim, and its run's end (true:
// it ended, decided).
bool watch_in_job(Pass& p, const AttemptState& a, const slurm::Job& job);
// The next attempt into the previous attempt's running job (sub.in_job, on its survivors and a spare),
// or, when it cannot, that job told to end (sub.stop_job) and a new one submitted.
void place_in_job(Pass& p, const AttemptState& previous, const std::vector<slurm::Job>& jobs, intent::Submit& sub);

// The lifecycle verbs' pause or cancel, when one is asked for (reconcile_lifecycle.cpp): true when it
// decided the pass (the phases below are not looked at).
bool lifecycle(Pass& p, const AttemptState* a);
// An ending's decision d under a pause (a resubmission, or the kill switch a pause --now set, waits
// for `mlsup resume`) or a cancel (anything short of completion ends the campaign as cancelled).
// switch_ours: the kill switch is mlsup's own (a person's stop over it stops).
void lifecycle_decision(const CampaignState& s, const AttemptState& a, decide::EndClass cls, bool switch_ours,
                        decide::Decision& d);

// An sbatch of an earlier supervisor that may still submit the open attempt a (reconcile_sbatch.cpp):
// true while it is waited for (nothing is submitted); false once it can submit no more.
bool sbatch_in_flight(Pass& p, const AttemptState& a);
// Jobs that carry one of the campaign's tags but are not the ones the journal names: cancelled.
void cancel_duplicates(Pass& p);

// True once attempt a's resubmission (after its ending) may go ahead.
bool submit_due(const CampaignState& s, Memory& m, const Clocks& now);

}  // namespace mlsup::engine::reconcile_parts
