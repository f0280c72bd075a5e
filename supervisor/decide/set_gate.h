#pragma once
// Which runs of a campaign set may start now (pure): a run starts once every run it comes after has
// completed, highest priority first, within the set's limits. This is the one gate a run passes
// before its first submission; a run that has started is never held back by it.
#include <string>
#include <vector>

namespace mlsup::engine {

// Where a run stands, from its journal.
enum class RunPhase { NotStarted, Active, Completed, Ended };

struct GateRun {
  std::string name;
  std::vector<std::string> after;  // runs that must have completed first
  int priority = 0;
  int nodes = 1;
  RunPhase phase = RunPhase::NotStarted;
  int exit_code = 0;  // Ended: the code it ended with
};

enum class Gate {
  Started,  // it has begun (or ended): its passes go on
  Start,    // it may start now
  Wait,     // not yet: a run it comes after has not completed, or a limit is reached
  Blocked,  // never, unless a person acts: a run it comes after stopped, failed or is blocked
};

struct GateDecision {
  Gate gate = Gate::Start;
  std::string reason;  // why it waits or is blocked; "" otherwise
  int exit_code = 0;   // Blocked: the exit code of the run that blocks it
  bool operator==(const GateDecision&) const = default;
};

// The gate's name as status shows it: "started", "may-start", "waiting", "blocked".
const char* gate_name(Gate g);

// One decision per run, in the order given. max_running, max_nodes: 0 = no limit. Runs that may
// start take the room left in priority order (ties in the order given); once one does not fit, the
// runs after it wait too, so a large run is not passed over for ever.
std::vector<GateDecision> decide_starts(const std::vector<GateRun>& runs, int max_running, int max_nodes);

}  // namespace mlsup::engine
