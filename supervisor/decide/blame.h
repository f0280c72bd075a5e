#pragma once
// Which nodes to hold responsible for a failed attempt, from the evidence at hand: Slurm's node
// states, active probes, and the failures before it. Pure: the engine gathers the evidence.
#include <string>
#include <vector>

#include "decide/classify.h"

namespace mlsup::decide {

// What is known of one node of the job when its attempt ended.
struct NodeEvidence {
  std::string name;
  bool slurm_down = false;        // Slurm shows it DOWN or DRAIN: Slurm keeps jobs off it already
  bool not_responding = false;    // Slurm marks it not responding, or mlsup's probe got no answer
  bool task_failed = false;       // srun reported its task's end first (the later reports are victims)
  bool failed_first = false;      // the plugin's records: the job's first failing task ran here
  bool first_weak = false;        // that first end was an exit code, an abort or a kill (weak_end())
  bool first_killed = false;      // ... a SIGKILL from outside (a person's kill -9, an OOM killer Slurm did not see):
                                  // no task failed before it, so it names no node, not even under the first-evidence rule
  bool health_failed = false;     // the plugin's health check failed here
  bool heartbeat_stale_first = false;  // a per-task heartbeat here stopped well before the other nodes'
  double heartbeat_lead = 0;           // by how many seconds
  std::string waited_on;               // the hang's stacks: the others wait on a rank here (why; "" = not)
  std::string named_by_output;         // a hang: the job's output names this node (why; "" = not)
};

// An earlier failed attempt, for the rule of the node common to repeated failures.
struct PastFailure {
  double time = 0;
  std::vector<std::string> nodes;  // its suspects (see suspects())
};

struct BlameInput {
  EndClass cls = EndClass::Failed;
  std::vector<NodeEvidence> job_nodes;   // every node of the attempt that ended
  std::vector<PastFailure> past;         // earlier failed attempts, any order
  double now = 0;
  double window_seconds = 6 * 3600;      // past failures older than this do not count
  int repeat_threshold = 2;              // failures, this one included, that a common node must share
  bool first_evidence = false;           // the first-evidence rule applies (decide/first_evidence.h)
  bool follows_training = false;         // the failure follows the training: its weak evidence names no node
};

struct Blamed {
  std::string node;
  std::string reason;            // one sentence for the event log
  bool first_evidence = false;   // excluded by the first-evidence rule (a weak or srun-reported first end)
};

// A node whose heartbeat stopped well before the others' (observe/heartbeat.h finds them).
struct StaleNode {
  std::string node;
  double lead = 0;  // seconds
};

// What a hang says of each node of the job: which went silent first, which did not answer the probe,
// on which the ranks' stacks show the others waiting (and why).
std::vector<NodeEvidence> hang_evidence(const std::vector<std::string>& nodes, const std::vector<StaleNode>& stale,
                                        const std::vector<std::string>& silent, const std::vector<std::string>& waited_on = {},
                                        const std::string& why = "");

// True for the endings that can say something about a node (a failure, a hang), not a time limit.
bool node_related(EndClass c);

// Whether a task's first end says little of its node: an exit code is the program saying why it
// stopped, an abort is its own decision, a kill comes from outside (a person, the OOM killer, srun).
// Only the signals of a machine's faults (SIGSEGV, SIGBUS, SIGILL) in the plugin's records speak
// against the node outright; a weak first end, or any first end srun reported, names the failure's
// one suspect, excluded at once under the first-evidence rule's guard (blame(), first_evidence.h),
// except a SIGKILL (first_killed): the rank was killed from outside, its node kept no task from running.
bool weak_end(int exit_code, int signal);

// The nodes a failure points at: the node of the first task end, a silent or first-stale node, or
// every node when nothing sets one apart. What the repeated-failure rule counts, and what the
// journal keeps of a failure.
std::vector<std::string> suspects(const std::vector<NodeEvidence>& job_nodes);

// The nodes to exclude from the next attempt; never every node of the job on circumstantial
// evidence, never a node Slurm already keeps jobs off.
std::vector<Blamed> blame(const BlameInput& in);

}  // namespace mlsup::decide
