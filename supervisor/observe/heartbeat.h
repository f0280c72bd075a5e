#pragma once
// Liveness from the heartbeat files, judged on mlsup's own clock: a heartbeat is alive when its
// content changed since mlsup last looked, so clock skew and attribute caching on shared
// filesystems cannot fake a hang (nor hide one). With the SPANK plugin each task writes a file of
// its own (P.d/<node>.<rank> beside the attempt's path P): the attempt progresses while any of
// them does, and when it hangs, the files that went silent first name their nodes.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"

namespace mlsup::engine {

// What mlsup has seen of one heartbeat file; kept across passes (and ticks) in the state dir.
struct HeartbeatSeen {
  std::string content;              // the file's last content seen ("" = never seen)
  double changed_at = 0;            // mlsup's clock when that content was first seen
  double running_since = 0;         // mlsup's clock when the job was first seen running
  long long step = -1;              // the step in content, -1 when none
  std::string phase;                // the phase word after the step ("saving", "eval", ...); "" while stepping
  bool waiting = false;             // a later word is "waiting": the rank is alive, blocked on its peers
  double progress_at = 0;           // mlsup's clock when the content last changed to one not waiting
  int empty_reads = 0;              // reads that found the file empty after it had content (a writer mid-way)
  long long first_step = -1;        // the step of the first content seen (-1 before it, or from an older mlsup)
  double compute = -1;              // the step's own compute seconds (a "compute=<s>" word); -1 when not told
  bool operator==(const HeartbeatSeen&) const = default;
};

// The step and the flags in a heartbeat's content: "<step>", then optionally phase words ("saving",
// "eval": lowercase letters, '-' and '_'; the first one is the phase, which gets the save timeout),
// then optionally "waiting ..." (alive but blocked, no progress); a word of another shape ends the
// reading and the rest is ignored, except a last word "compute=<seconds>" (the rank's own compute in
// that step, outside the collectives); garbage gives step -1.
HeartbeatSeen parse_heartbeat(const std::string& content);

// Folds one look at the file (nullopt = missing) into what was seen, at mlsup's time now. An empty
// read of a file that had content is no observation (a writer between truncate and write): it is
// only counted.
HeartbeatSeen observe(const HeartbeatSeen& before, const std::optional<std::string>& content, double now);

// Why the attempt counts as hung at now, or "" when it does not.
std::string hang_reason(const HeartbeatSeen& seen, const config::HeartbeatSettings& settings, double now);

// Every heartbeat file of one attempt: P itself (key "") and each P.d/<name> (key <name>).
struct HeartbeatSet {
  std::map<std::string, HeartbeatSeen> files;
  double running_since = 0;
  bool operator==(const HeartbeatSet&) const = default;
};

// The job's output as one more "file" of the set (heartbeat.source auto or output): its content is
// "output <bytes>", so it progresses while the output grows; it names no node and has no step.
inline constexpr const char* kOutputKey = "(output)";
std::string output_content(unsigned long long bytes);

// Folds one look at all the files (name -> content; a file not listed keeps what was seen). Once a
// heartbeat file has content, the job's output no longer counts: the training's heartbeats rule.
void observe(HeartbeatSet& set, const std::map<std::string, std::string>& contents, double now);

// True once a heartbeat file (not the output) of the set has had content.
bool heartbeat_written(const HeartbeatSet& set);

// The attempt's heartbeat as one: it progresses while any file does (newest progress), its step is
// the highest, it is in a phase while any file is without also waiting on its peers (when every rank
// in a phase is blocked, nobody is saving); its content is that of the file that progressed last.
HeartbeatSeen combined(const HeartbeatSet& set);

// Why the attempt counts as hung at now, or "" when it does not.
std::string hang_reason(const HeartbeatSet& set, const config::HeartbeatSettings& settings, double now);

// The node of a per-task file name "<node>.<rank>", or "" for a name of another shape.
std::string heartbeat_node(const std::string& name);

// A node whose heartbeat stopped changing well before the others'.
struct StaleFirst {
  std::string node;
  double lead = 0;  // seconds between its last change and the newest change on any other node
};

// The nodes with a file that stopped changing at least margin seconds before the newest change of a
// file on another node (a node is as stale as its stalest file); needs per-task files of two nodes.
std::vector<StaleFirst> stale_first(const HeartbeatSet& set, double margin);

// The stale_first nodes while every per-task file on every other node says "waiting": the ranks
// are alive and blocked on those nodes. Empty otherwise.
std::vector<StaleFirst> waited_on(const HeartbeatSet& set, double margin);

// The margin stale_first needs: max(2 s, a quarter of the steady timeout).
double stale_margin(const config::HeartbeatSettings& settings);

// What the campaign has shown of its pace: the longest silence mlsup saw between two steps.
struct Calibration {
  double longest = 0;  // seconds, on mlsup's clock
  int steps = 0;       // progress observations counted
  int doublings = 0;   // calibrated hangs that named no node: each doubles the factor
  int doubled_in = 0;  // the attempt of the last doubling (one per attempt)
  bool operator==(const Calibration&) const = default;
};

// Counts the progress from before to after (the attempt's combined heartbeat, one pass apart); the
// first progress of an attempt (start-up) and progress around a phase are not its pace (the job's
// output has no step, so it teaches nothing).
void learn(Calibration& c, const HeartbeatSeen& before, const HeartbeatSeen& after);

// Steps seen before the calibrated timeout applies.
inline constexpr int kCalibrateAfter = 20;

// The steady timeout in force: the configured one, or, with calibration on and 20 steps seen,
// calibrate_factor x 2^doublings x the longest silence seen, within [calibrate_min, steady_timeout].
config::Seconds steady_timeout(const config::HeartbeatSettings& settings, const Calibration& c);

// The shortest calibrated timeout a poll interval allows: three polls, in whole seconds.
config::Seconds calibrate_floor(config::Millis poll_interval);

// The heartbeat settings a pass judges by: calibrate_min raised to calibrate_floor, steady_timeout as
// above from the longest silence seen less one poll interval (what polling adds to a silence).
config::HeartbeatSettings settings_in_force(config::HeartbeatSettings configured, config::Millis poll_interval,
                                            const Calibration& c);

// Whether the steady timeout in force (settings_in_force's) is the calibrated one, not the configured one.
bool is_calibrated(const config::HeartbeatSettings& in_force, const config::HeartbeatSettings& configured);

// After a hang called by the calibrated timeout that no heartbeat pinned on a node (perhaps a long
// pause the training did not mark as a phase): doubles the factor, once per attempt.
void doubt(Calibration& c, int attempt);

}  // namespace mlsup::engine
