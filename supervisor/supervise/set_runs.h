#pragma once
// Campaign sets at run time: where each run stands (its journal, read only) and the set's gate on it.
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "config/campaign_set.h"
#include "decide/set_gate.h"

namespace mlsup::engine {

// Where the campaign c stands from its journal (read only): its phase, and for Ended its exit code.
std::pair<RunPhase, int> journal_phase(const config::Config& c);

// The nodes the run's job asks for, as max_nodes counts them: its template rendered with its config (so
// an #SBATCH --nodes of a plain script counts), else slurm.nodes, else 1.
int run_nodes(const config::Config& c);

// The gate of every run of set, by name, from the runs' journals. opened: runs that a supervisor in
// this process has begun, counted as running whatever their journals say yet.
std::map<std::string, GateDecision> set_gates(const config::CampaignSet& set, const std::set<std::string>& opened = {});

// The gate of the campaign c when it is a run of a set (the set read again); nullopt for a campaign
// of its own, or when the set no longer loads.
std::optional<GateDecision> gate_of(const config::Config& c);

}  // namespace mlsup::engine
