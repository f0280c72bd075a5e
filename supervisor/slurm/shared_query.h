#pragma once
// One job query per pass for every campaign of a supervisor: a Client over another whose jobs() and
// find_by_tag() are answered from one load of the user's jobs per pass. A call that changes a job
// (submit, cancel, an update) drops the load, so what is asked after it is asked of Slurm again.
#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include "slurm/client.h"

namespace mlsup::slurm {

class SharedQuery final : public Client {
 public:
  explicit SharedQuery(Client& inner) : inner_(inner) {}

  // A new pass begins: the next job question loads the user's jobs again.
  void new_pass();
  // Job queries sent to Slurm so far.
  long long loads() const;
  // Calls to Slurm that failed so far, by kind (a failed load counts once, however many asked it).
  std::map<ErrorKind, long long> errors() const;

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
  std::string backend() const override { return inner_.backend(); }

 private:
  using Loaded = std::shared_ptr<const Result<std::vector<Job>>>;
  // The user's jobs as loaded in this pass (loading them when they are not), shared, not copied.
  Loaded user_jobs();
  template <typename T>
  T changed(T result);
  template <typename T>
  T counted(T result);  // result, its failure counted

  Client& inner_;
  mutable std::mutex mutex_;
  Loaded loaded_;
  long long loads_ = 0;
  std::map<ErrorKind, long long> errors_;
};

}  // namespace mlsup::slurm
