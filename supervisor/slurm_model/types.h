#pragma once
// What mlsup knows of Slurm jobs and nodes, independent of how it was asked (libslurm or commands).
#include <chrono>
#include <cstdint>
#include <ctime>
#include <expected>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mlsup::slurm {

using JobId = std::uint32_t;

// How long one sbatch may take before it is given up (its outcome then unknown).
inline constexpr std::chrono::seconds kSbatchTimeout{120};

enum class JobState {
  Pending, Running, Suspended, Completed, Cancelled, Failed, Timeout, NodeFail, Preempted, BootFail, Deadline,
  OutOfMemory, Unknown,
};

// Slurm's upper-case name of a state ("NODE_FAIL"), and back.
std::string_view state_name(JobState s);
JobState state_from_name(std::string_view name);

// True for the states a job does not leave (it has ended).
bool is_final(JobState s);

struct Job {
  JobId job_id = 0;
  JobId array_job_id = 0;                  // 0 when not part of an array
  std::optional<std::uint32_t> array_task_id;  // set for one task of an array
  std::string array_task_pending;          // pending tasks still in this record ("3-10%1"), "" if none
  std::string name;
  std::string comment;                     // mlsup's tag lives here
  JobState state = JobState::Unknown;
  bool completing = false;                 // the job is still releasing its nodes
  std::string reason;                      // why it is pending or why it failed ("ReqNodeNotAvail", "NonZeroExitCode")
  int exit_code = 0;                       // the batch script's exit code
  int exit_signal = 0;                     // the signal that ended it, 0 if none
  std::string nodes;                       // allocated nodes, Slurm hostlist form ("n[1-2]")
  std::string excluded_nodes;              // ExcNodeList
  std::string batch_host;                  // the node its batch script runs on (BatchHost), once started
  std::string partition;                   // the partition it runs or waits in
  std::uint32_t node_count = 0;
  std::uint32_t num_tasks = 0;              // the tasks it asks for (NumTasks), 0 when not known
  std::uint32_t user_id = 0;
  std::time_t submit_time = 0, start_time = 0, end_time = 0;
  std::optional<std::uint32_t> time_limit_minutes;  // nullopt = unlimited
  std::string std_out;                     // the job's output path, with Slurm's patterns expanded when known
  std::string std_err;                     // its error path (the output path when not separate)
};

struct Node {
  std::string name;
  std::string state;   // base state as Slurm names it: IDLE, ALLOCATED, MIXED, DOWN, ...
  bool drain = false;  // DRAIN flag set (draining or drained)
  bool not_responding = false;
  std::string reason;
  std::vector<std::string> partitions;  // the partitions it belongs to ([] when not known)
  std::string address;   // NodeAddr: where Slurm reaches it ("" when not known)
  std::string hostname;  // NodeHostname ("" when not known)

  // True when Slurm itself keeps new jobs off the node (DOWN or draining).
  bool kept_off() const { return state == "DOWN" || drain; }
};

// One GPU of a node as its driver names it (the SPANK plugin reads /proc/driver/nvidia/gpus/<bus>/information).
struct Gpu {
  std::string uuid;   // "GPU-<hex>": the board's identity, whatever node name it appears under
  std::string bus;    // its PCI address on that node ("0000:07:00.0")
  std::string model;
  bool operator==(const Gpu&) const = default;
};

// Each node's other names as Slurm gives them (NodeAddr, NodeHostname), where they differ from its name.
std::map<std::string, std::vector<std::string>> other_names(const std::vector<Node>& nodes);

// How a request to Slurm failed. Never a job state: a failed query says nothing about the job.
enum class ErrorKind {
  Unreachable,       // the controller did not answer (down, refused, network)
  Timeout,           // the controller took too long
  UnknownJob,        // Slurm does not know the job (never existed, or aged out after MinJobAge)
  PermissionDenied,  // not allowed for this user
  Rejected,          // the request is wrong and retrying will not help (bad partition, too many nodes, QOS)
  OverLimit,         // it goes against an accounting/QOS limit: a momentary submit limit, or a size or time limit
  Busy,              // the controller asks to come back later
  Other,
};

// A kind's name ("over-limit"), and back (Other for a name it does not know).
std::string_view error_kind_name(ErrorKind k);
ErrorKind error_kind_from_name(std::string_view name);

struct Error {
  ErrorKind kind = ErrorKind::Other;
  int code = 0;         // Slurm errno when known
  std::string message;  // Slurm's own words

  // True when the same request may succeed later (retry with backoff).
  bool transient() const;
};

template <typename T>
using Result = std::expected<T, Error>;

// Sorts a Slurm errno into an ErrorKind.
ErrorKind classify_errno(int code);

// Sorts an error message of sbatch/scontrol into an ErrorKind (for the command-line backend).
ErrorKind classify_message(std::string_view message);

// True when a running job's batch host is no longer among its nodes: Slurm removed the failed node
// from a --no-kill job and killed the batch script with it, yet keeps the job RUNNING on the others
// with nothing left to run in it (until its time limit).
bool batch_host_lost(const Job& job);

// True when a signal or cancel was refused because the job or step is ending or has ended already
// (ESLURM_ALREADY_DONE, "Job/step already completing or completed"): for a kill, the wanted outcome.
bool already_over(const Error& e);

// The jobs whose id, or array id, is in ids.
std::vector<Job> with_ids(const std::vector<Job>& jobs, const std::vector<JobId>& ids);

// The jobs whose comment starts with tag_prefix (and, when given, that belong to user_id).
std::vector<Job> with_tag(const std::vector<Job>& jobs, const std::string& tag_prefix,
                          std::optional<std::uint32_t> user_id = std::nullopt);

// Expands a Slurm hostlist ("n[1-3,5],m2") into names; at most 65,536 of them (more than any cluster
// has nodes): a list that would give more, or absurdly long names, is cut short.
std::vector<std::string> expand_hostlist(std::string_view hostlist);

}  // namespace mlsup::slurm
