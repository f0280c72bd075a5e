#pragma once
// A Client for unit tests of the core: jobs and nodes are whatever the test scripts, every call is
// logged, and any call can be made to fail.
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "slurm/client.h"

namespace mlsup::slurm {

class FakeClient final : public Client {
 public:
  std::vector<std::string> calls;             // "submit", "jobs 3,4", "cancel 3", ... in order
  std::vector<SubmitRequest> submitted;       // every submit request
  std::map<JobId, Job> table;                 // the jobs Slurm knows
  std::vector<Node> node_table;
  std::deque<Error> next_errors;              // each call pops one, if any, and fails with it
  std::map<std::string, std::deque<Error>> failing;  // by verb ("cancel"): each such call pops one, after next_errors
  std::map<std::string, Error> always_failing;  // calls by name ("submit") that fail with this every time
  JobId next_id = 100;
  Accounting accounting;                      // what slurmdbd keeps (available = false: no accounting)
  NodeFailureHistory history;                 // node_failure_history's answer, whatever the window

  // Sets a known job's state (and optionally its exit code, nodes).
  void set_state(JobId id, JobState state, int exit_code = 0, const std::string& nodes = "");

  Result<JobId> submit(const SubmitRequest& request) override;
  Result<std::vector<Job>> jobs(const std::vector<JobId>& ids) override;
  Result<std::vector<Job>> find_by_tag(const std::string& tag_prefix) override;
  Result<Accounting> accounted(const std::vector<JobId>& ids) override;
  Result<Accounting> accounted_by_tag(const std::string& tag_prefix, std::time_t since) override;
  Result<NodeFailureHistory> node_failure_history(std::time_t since) override;
  Result<std::vector<Node>> nodes() override;
  Result<void> cancel(JobId id) override;
  Result<void> signal(JobId id, int signal, bool batch_only) override;
  Result<void> signal_steps(JobId id, int signal) override;
  Result<void> hold(JobId id) override;
  Result<void> release(JobId id) override;
  Result<void> set_excluded(JobId id, const std::string& nodes) override;
  Result<void> set_node_count(JobId id, int nodes, int tasks) override;
  std::string backend() const override { return "fake"; }

 private:
  std::vector<Job> all() const;
  std::optional<Error> scripted_failure(const std::string& call);
  Result<void> on_known(JobId id, const std::string& call);
};

}  // namespace mlsup::slurm
