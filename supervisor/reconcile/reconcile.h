#pragma once
// The reconcile pass's decisions, pure: the journal's state, what this pass observed, the memory of
// earlier passes, the config and the clocks in; intents and the memory for the next pass out.
// No file, process or Slurm call happens here: tests give a world and read the intents.
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "reconcile/intents.h"
#include "state/memory.h"
#include "state/state.h"
#include "reconcile/world.h"

namespace mlsup::engine {

struct Reconciled {
  Memory memory;
  std::vector<Intent> intents;  // in the order they are carried out
  bool queued = false;          // only a job waiting in the queue, nothing decided: the next pass may wait
  double quiet_until = 0;       // mono: the passes until then may go on Slurm's last answer (decide/quiet.h)
};

// What the campaign identified by campaign_id calls for.
Reconciled reconcile(const CampaignState& s, const World& w, Memory m, const config::Config& c,
                     const std::string& campaign_id);

// What reconcile needs observed, given what w holds so far (first the journal and memory alone,
// then the job query's answer too): observe.cpp reads what is asked and not yet read.
Needs needs(const CampaignState& s, const World& w, const Memory& m, const config::Config& c);

// True when the round that turned before into after left work due at once, for a second round in
// the same pass: an ending whose resubmission needs no wait, or failed sbatches that now end the campaign.
bool due_at_once(const Progress& before, const CampaignState& after, Memory m, const config::Config& c,
                 const Clocks& now);

// A failure's first end and what the first-evidence rule makes of it (decide/first_evidence.h).
struct FirstWeighed {
  decide::FirstEnd end;
  decide::FirstEvidence verdict;
};

// The exclusions an ending of class cls of attempt blames on its nodes (the evidence), given the
// failures before it and the first-evidence rule's weighing of its first end (none for a hang),
// until policy.exclusion_ttl from now (wall time): the one rule for endings and hangs.
std::vector<intent::Exclude> blame_exclusions(const CampaignState& s, int attempt, decide::EndClass cls,
                                              std::vector<decide::NodeEvidence> evidence, const config::Config& c,
                                              double now, const std::optional<FirstWeighed>& first = std::nullopt);

// The submission the campaign would make next, as submit() decides it (attempt number, tag, resume point from
// the newest complete checkpoint in w, the live exclusions capped by w's nodes); an attempt journaled and not
// yet sent keeps the values of its intent. nullopt when nothing would be submitted (no template in w).
std::optional<intent::Submit> next_submission(const CampaignState& s, const World& w, const config::Config& c);

// The lifecycle verbs' request to take next (state/lifecycle.h): the oldest of requests, refused when
// the state no longer allows it, marked done when the journal already has it (its file is left over).
std::optional<intent::TakeRequest> next_request(const CampaignState& s, const std::vector<Request>& requests);

// The job of attempt a in a job query's answer: its job, or in chain mode the task that claimed it.
const slurm::Job* watched_job(const AttemptState& a, const std::vector<slurm::Job>& jobs);

// Spare nodes (reconcile_spares.cpp): The nodes of the next run: the previous run's (in rank order) with each one that is bad or gone from
// the job replaced by a spare of the job; the first good ones when the previous are not known; nullopt
// when the spares do not suffice.
std::optional<std::vector<std::string>> spare_step_nodes(const std::vector<std::string>& previous,
                                                         const std::vector<std::string>& job_nodes,
                                                         const std::vector<std::string>& bad, int needed);

}  // namespace mlsup::engine
