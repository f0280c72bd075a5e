#pragma once
// The per-node records the SPANK plugin writes (plugins/README.md): task exits and health
// checks, one JSON object per line in <state_dir>/nodes/<job>/<node>.jsonl. Pure except for
// reading those files; the plugin appends while we read, so nothing here takes a lock.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "slurm_model/types.h"

namespace mlsup::observe {

// The step of the batch script is -1, the extern step -2, interactive -3 (other special ids -4).
inline constexpr int kBatchStep = -1;

// The exit code a task uses to say "my node failed the plugin's health check".
inline constexpr int kHealthExitCode = 79;

struct TaskExit {
  std::string node;
  int step = 0;
  int rank = 0;        // global task id
  int exit_code = 0;   // 0 when it ended by a signal
  int signal = 0;      // 0 when it exited
  double time = 0;     // wall-clock seconds when slurmstepd saw it end
};

struct HealthCheck {
  std::string node;
  int step = 0;
  bool ok = true;
  int exit_code = 0;
  std::string detail;  // the check's first line of output
  double time = 0;
  std::size_t detail_bytes = 0;  // > 0 when the plugin cut detail: the full line's length
};

// What a node was when a step started there: its network addresses (every interface's, loopback and
// link-local left out) and its GPUs.
struct NodeFacts {
  std::string node;
  int step = 0;
  std::vector<std::string> addresses;
  std::vector<slurm::Gpu> gpus;
  double time = 0;
};

struct NodeRecords {
  std::vector<TaskExit> exits;
  std::vector<HealthCheck> health;
  std::vector<NodeFacts> facts;  // by time, as the others
  std::vector<std::string> problems;  // lines that could not be read, each "node:line: what"
};

// Parses one node's file; node names the file (used when a record lacks its own). A health
// detail the plugin cut ("detail_truncated", "detail_bytes") ends " [cut from N bytes]". A torn last
// line (a writer caught mid-way) or a bad line becomes a problem, never a failure; unknown kinds
// are skipped.
NodeRecords parse_node_records(std::string_view text, std::string_view node);

// One node's file of records as read: the node its name gives, its text, or why it could not be read.
struct NodeFile {
  std::string node;
  std::string text;
  std::string problem;  // "" when read
};

// Every file's records (parse_node_records), exits and checks ordered by time; an unread file's problem kept.
NodeRecords combine_node_records(const std::vector<NodeFile>& files);

// Reads <state_dir>/nodes/<job_id>/*.jsonl (regular files only; observe/read_node_records.cpp) and
// combines them. A missing directory gives empty records.
NodeRecords read_node_records(const std::string& state_dir, std::uint32_t job_id);

// True for a task that ended badly: a non-zero exit code or any signal.
bool failed(const TaskExit& e);

// Exit times come from different nodes' clocks: failures within this many seconds of the
// earliest one are taken as simultaneous (NTP keeps clocks within milliseconds; 2 s also covers a
// node whose clock has drifted, and slurmstepd's own delay in reporting a task's end).
inline constexpr double kClockMargin = 2.0;

// The task that failed first. A task ended by SIGKILL or SIGTERM does not count when another task
// failed otherwise no later than margin = max(kill_grace, kClockMargin) seconds after it (it was
// killed because of that one, e.g. by --kill-on-bad-exit). Among the failures within margin of the
// earliest, no clock decides: a failure that is not a kill comes first, then a task of a step
// before the batch script (step < 0: it fails because its step did), then the lowest rank.
std::optional<TaskExit> first_failure(const std::vector<TaskExit>& exits, double kill_grace = 1.0);

// Each node's latest facts (by time) among the records.
std::map<std::string, NodeFacts> latest_facts(const std::vector<NodeFacts>& facts);

// The nodes whose health check failed, sorted, unique.
std::vector<std::string> failed_health(const std::vector<HealthCheck>& checks);

}  // namespace mlsup::observe
