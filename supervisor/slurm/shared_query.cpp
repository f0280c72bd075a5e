#include "slurm/shared_query.h"

namespace mlsup::slurm {

void SharedQuery::new_pass() {
  std::lock_guard lock(mutex_);
  loaded_.reset();
}

long long SharedQuery::loads() const {
  std::lock_guard lock(mutex_);
  return loads_;
}

std::map<ErrorKind, long long> SharedQuery::errors() const {
  std::lock_guard lock(mutex_);
  return errors_;
}

template <typename T>
T SharedQuery::counted(T result) {
  if (!result) {
    std::lock_guard lock(mutex_);
    ++errors_[result.error().kind];
  }
  return result;
}

SharedQuery::Loaded SharedQuery::user_jobs() {
  std::lock_guard lock(mutex_);  // held through the load: the others of the pass wait for its answer
  if (!loaded_) {
    loaded_ = std::make_shared<const Result<std::vector<Job>>>(inner_.find_by_tag(""));
    ++loads_;
    if (!*loaded_) ++errors_[loaded_->error().kind];
  }
  return loaded_;
}

template <typename T>
T SharedQuery::changed(T result) {
  std::lock_guard lock(mutex_);
  loaded_.reset();
  if (!result) ++errors_[result.error().kind];
  return result;
}

Result<std::vector<Job>> SharedQuery::jobs(const std::vector<JobId>& ids) {
  const auto all = user_jobs();
  if (!*all) return std::unexpected(all->error());
  return with_ids(**all, ids);
}

Result<std::vector<Job>> SharedQuery::find_by_tag(const std::string& tag_prefix) {
  const auto all = user_jobs();
  if (!*all) return std::unexpected(all->error());
  return with_tag(**all, tag_prefix);
}

Result<Accounting> SharedQuery::accounted(const std::vector<JobId>& ids) { return counted(inner_.accounted(ids)); }
Result<Accounting> SharedQuery::accounted_by_tag(const std::string& tag_prefix, std::time_t since) {
  return counted(inner_.accounted_by_tag(tag_prefix, since));
}
Result<NodeFailureHistory> SharedQuery::node_failure_history(std::time_t since) {
  return counted(inner_.node_failure_history(since));
}
Result<std::vector<Node>> SharedQuery::nodes() { return counted(inner_.nodes()); }

Result<JobId> SharedQuery::submit(const SubmitRequest& request) { return changed(inner_.submit(request)); }
Result<void> SharedQuery::cancel(JobId id) { return changed(inner_.cancel(id)); }
Result<void> SharedQuery::signal(JobId id, int sig, bool batch_only) { return changed(inner_.signal(id, sig, batch_only)); }
Result<void> SharedQuery::signal_steps(JobId id, int sig) { return changed(inner_.signal_steps(id, sig)); }
Result<void> SharedQuery::hold(JobId id) { return changed(inner_.hold(id)); }
Result<void> SharedQuery::release(JobId id) { return changed(inner_.release(id)); }
Result<void> SharedQuery::set_excluded(JobId id, const std::string& nodes) { return changed(inner_.set_excluded(id, nodes)); }
Result<void> SharedQuery::set_node_count(JobId id, int nodes, int tasks) {
  return changed(inner_.set_node_count(id, nodes, tasks));
}

}  // namespace mlsup::slurm
