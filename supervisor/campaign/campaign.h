#pragma once
// One campaign's reconcile pass, thin: replay the journal, observe what the pass needs (Observer),
// decide (reconcile/reconcile.h, pure), act on each intent with its record before it (Actor); what
// passes remember beyond the journal kept in memory.json.
#include <memory>
#include <optional>
#include <string>

#include "campaign/actor.h"
#include "campaign/edges.h"
#include "campaign/observer.h"
#include "campaign/template_snapshot.h"
#include "config/config.h"
#include "state/memory.h"
#include "util/error.h"

namespace mlsup::engine {

// How a campaign ended.
struct Outcome {
  int exit_code = 0;
  std::string reason;
};

class Campaign {
 public:
  // Opens the campaign's journal (starting it on first use) and claims the checkpoint directory.
  static util::Result<std::unique_ptr<Campaign>> open(config::Config config, Edges edges);
  ~Campaign();

  // One reconcile pass; returns the outcome once the campaign has ended.
  util::Result<std::optional<Outcome>> pass();

  // Takes the lifecycle verbs' requests waiting in <state_dir>/requests (state/lifecycle.h) and
  // journals them, without a reconcile round (a pass does this first).
  util::Result<void> requests();

  // Saves what the passes observed and have not saved yet (memory.json, status.json): before a tick
  // or a supervisor lets the campaign go. Nothing once the lease is lost.
  void flush();

  // Applies a new, already validated config from the next pass on.
  void reload(config::Config config);

  const config::Config& config() const { return config_; }

  // The last pass saw only its job waiting in the queue (reconcile/reconcile.h): the next may wait
  // pending_poll_interval.
  bool queued() const { return queued_; }
  // The newest attempt whose end is journaled (0: none yet): a pass that saw an ending raises it.
  int last_ended();
  // Seconds until the turn to call sbatch that a new submission waits for (nullopt: none waits).
  std::optional<double> submit_turn_in() const;
  // Seconds the next passes may go on Slurm's last answer, its job running and nothing cheaper having
  // moved (reconcile/reconcile.h; nullopt: Slurm is to be asked at the next pass).
  std::optional<double> quiet_for() const;

 private:
  Campaign(config::Config config, Edges edges);

  // One round of a pass: observe, reconcile, act (a pass runs a second one when an ending's
  // resubmission, or a failed sbatch's last word, is due at once).
  util::Result<void> round(const CampaignState& s);

  void load_memory();
  // Saves the memory: a decision's change at once, observations when memory_save_interval is over or
  // now is true.
  void save_memory(bool now);
  // True when the memory is as when it was last saved, or last found to be (by its text), but for
  // the save times: then its text is too.
  bool memory_unchanged();
  // The memory's text without its save times.
  static std::string comparable_text(const Memory& m);

  config::Config config_;
  Edges edges_;
  std::string campaign_id_;
  Memory memory_;             // what passes remember beyond the journal (memory.json)
  TemplateKeeper templates_;  // what submissions render from
  Actor actor_;
  Observer observer_;
  bool queued_ = false;
  double quiet_until_ = 0;       // mono: the last pass's Reconciled::quiet_until
  std::string memory_saved_;     // memory.json's text as last written (comparable_text)
  double observed_saved_at_ = 0; // mono: when memory.json was last written
  std::optional<Memory> memory_checked_;  // the memory whose text was last written or found unchanged
};

}  // namespace mlsup::engine
