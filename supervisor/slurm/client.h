#pragma once
// The one interface through which mlsup talks to Slurm. Every call is a blocking RPC or process:
// call it from a worker thread, never from the event loop.
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "slurm_model/accounting.h"
#include "slurm_model/types.h"

namespace mlsup::slurm {

struct SubmitRequest {
  std::vector<std::string> options;  // sbatch options (render::Submission::options)
  std::vector<std::pair<std::string, std::string>> environment;  // added to sbatch's environment
  std::string script_path;           // the rendered script
  std::string working_dir;           // sbatch runs here (the job's default working directory)
  std::function<void(int pid)> on_start;  // told sbatch's pid once it runs, before it is waited for
};

class Client {
 public:
  virtual ~Client() = default;

  // Submits one batch job (or array) and returns its id.
  virtual Result<JobId> submit(const SubmitRequest& request) = 0;

  // The jobs (array tasks included) whose ids, or array ids, are in ids: one request for all of them.
  // A job Slurm has forgotten is simply absent.
  virtual Result<std::vector<Job>> jobs(const std::vector<JobId>& ids) = 0;

  // Every job of this user whose comment starts with tag_prefix: one request.
  virtual Result<std::vector<Job>> find_by_tag(const std::string& tag_prefix) = 0;

  // What accounting keeps of the jobs with these ids (array tasks by their own id): one request;
  // at once `available = false` where the site has no accounting. A job it has no record of is absent.
  virtual Result<Accounting> accounted(const std::vector<JobId>& ids) = 0;

  // The jobs in accounting submitted since `since` whose comment starts with tag_prefix: one request.
  virtual Result<Accounting> accounted_by_tag(const std::string& tag_prefix, std::time_t since) = 0;

  // Every user's jobs that ended since `since`: their node-seconds and node failures, one request;
  // at once `available = false` where the site keeps no accounting.
  virtual Result<NodeFailureHistory> node_failure_history(std::time_t since) = 0;

  // Every node of the cluster: one request.
  virtual Result<std::vector<Node>> nodes() = 0;

  // Cancels a job (all tasks of an array when id is the array's).
  virtual Result<void> cancel(JobId id) = 0;

  // Sends signal to the batch shell only (batch_only) or to every step and the batch shell.
  virtual Result<void> signal(JobId id, int signal, bool batch_only) = 0;

  // signal to each step the job has now, by its id (a step started later is never hit), at once;
  // the batch shell and the extern step are left alone.
  virtual Result<void> signal_steps(JobId id, int signal) = 0;

  // SIGKILL to each step, without Slurm's grace (KillWait, 30 s by default) in which a task stuck in
  // a collective keeps its node.
  Result<void> kill_steps(JobId id) { return signal_steps(id, 9); }

  // Holds or releases a pending job.
  virtual Result<void> hold(JobId id) = 0;
  virtual Result<void> release(JobId id) = 0;

  // Replaces the excluded nodes of a pending job (ExcNodeList); "" clears it.
  virtual Result<void> set_excluded(JobId id, const std::string& nodes) = 0;

  // Makes a pending job ask for exactly nodes nodes (NumNodes) and, when tasks > 0, that many tasks.
  virtual Result<void> set_node_count(JobId id, int nodes, int tasks) = 0;

  // "libslurm" or "cli".
  virtual std::string backend() const = 0;
};

// Which jobs one libslurm query loads: the user's (REQUEST_JOB_USER_INFO, always answered in full),
// or the whole table (REQUEST_JOB_INFO, answered "no change" when nothing changed since the last).
enum class QueryScope { User, All };

// The libslurm backend (queries, signals, updates by RPC; submission through sbatch).
std::unique_ptr<Client> make_libslurm_client(QueryScope scope = QueryScope::User);

// The command-line backend: sbatch, squeue, scontrol, scancel, one process per request.
std::unique_ptr<Client> make_cli_client();

// "libslurm", "cli", or "auto" (libslurm). Returns nullptr for an unknown name.
std::unique_ptr<Client> make_client(const std::string& backend);

}  // namespace mlsup::slurm
