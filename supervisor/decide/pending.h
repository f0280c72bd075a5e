#pragma once
// What a pending job calls for, from Slurm's reason and how long it has waited: wait, drop one of
// mlsup's exclusions (it waits for nodes they keep out), or tell people (waiting will not end it).
// Pure: the engine measures the waits on its monotonic clock.
#include <string_view>

namespace mlsup::decide {

enum class PendingStep { Wait, Relax, Alert };

struct PendingInput {
  std::string_view reason;       // Slurm's pending reason ("ReqNodeNotAvail, UnavailableNodes:n2")
  bool has_exclusions = false;   // mlsup keeps nodes out of the job
  double unavailable_for = 0;    // seconds it has waited for missing nodes, since the last relaxation
  double pending_for = 0;        // seconds it has been pending
  bool alerted = false;          // people were told already
  double relax_after = 0;        // policy.exclusion_relax_after
  double alert_after = 0;        // policy.pending_alert_after
};

// True when the job waits for nodes that are missing while mlsup excludes some (relaxing may help).
bool waiting_for_nodes(std::string_view reason, bool has_exclusions);

// True for a reason by which a job waits for nodes to be free or usable ("Resources", "Priority",
// "ReqNodeNotAvail, ..."): whether they can ever be is a question of the partition's nodes (capacity.h).
bool waits_for_resources(std::string_view reason);

// Whether a pending job with this reason may be short of usable nodes: waiting for resources, or
// BadConstraints, which Slurm 22.05 gives a job its exclusions or a node count leave unrunnable.
bool may_want_nodes(std::string_view reason);

// True for a reason that waiting does not end: a limit, a hold, a bad request.
bool stuck_reason(std::string_view reason);

// True for a reason that says the job cannot start as asked (more nodes than the partition has, a
// longer time than it allows, a bad constraint, an invalid account): told at once. Required nodes
// down while mlsup excludes none may come back: told after policy.pending_alert_after.
bool never_starts(std::string_view reason);

// The step for a pending job.
PendingStep judge_pending(const PendingInput& in);

}  // namespace mlsup::decide
