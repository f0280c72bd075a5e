#include "slurm/fake_client.h"

#include <algorithm>

#include "util/strings.h"

namespace mlsup::slurm {

void FakeClient::set_state(JobId id, JobState state, int exit_code, const std::string& nodes) {
  Job& j = table[id];
  j.job_id = id;
  j.state = state;
  j.exit_code = exit_code;
  if (!nodes.empty()) j.nodes = nodes;
}

std::vector<Job> FakeClient::all() const {
  std::vector<Job> out;
  for (const auto& [id, job] : table) out.push_back(job);
  return out;
}

std::optional<Error> FakeClient::scripted_failure(const std::string& call) {
  calls.push_back(call);
  if (const auto it = always_failing.find(call.substr(0, call.find(' '))); it != always_failing.end()) return it->second;
  auto& queue = next_errors.empty() ? failing[call.substr(0, call.find(' '))] : next_errors;
  if (queue.empty()) return std::nullopt;
  Error e = queue.front();
  queue.pop_front();
  return e;
}

Result<void> FakeClient::on_known(JobId id, const std::string& call) {
  if (auto e = scripted_failure(call + " " + std::to_string(id))) return std::unexpected(*e);
  if (!table.contains(id)) return std::unexpected(Error{ErrorKind::UnknownJob, 0, "Invalid job id specified"});
  return {};
}

Result<JobId> FakeClient::submit(const SubmitRequest& request) {
  if (auto e = scripted_failure("submit")) return std::unexpected(*e);
  submitted.push_back(request);
  const JobId id = next_id++;
  Job& j = table[id];
  j.job_id = id;
  j.state = JobState::Pending;
  for (const auto& o : request.options)
    if (util::starts_with(o, "--comment=")) j.comment = o.substr(10);
  return id;
}

Result<std::vector<Job>> FakeClient::jobs(const std::vector<JobId>& ids) {
  std::vector<std::string> names;
  for (JobId id : ids) names.push_back(std::to_string(id));
  if (auto e = scripted_failure("jobs " + util::join(names, ","))) return std::unexpected(*e);
  return with_ids(all(), ids);
}

Result<std::vector<Job>> FakeClient::find_by_tag(const std::string& tag_prefix) {
  if (auto e = scripted_failure("find_by_tag " + tag_prefix)) return std::unexpected(*e);
  return with_tag(all(), tag_prefix);
}

Result<Accounting> FakeClient::accounted(const std::vector<JobId>& ids) {
  std::vector<std::string> names;
  for (JobId id : ids) names.push_back(std::to_string(id));
  if (auto e = scripted_failure("accounted " + util::join(names, ","))) return std::unexpected(*e);
  Accounting out{accounting.available, {}};
  for (const auto& j : accounting.jobs)
    if (std::find(ids.begin(), ids.end(), j.job_id) != ids.end()) out.jobs.push_back(j);
  return out;
}

Result<Accounting> FakeClient::accounted_by_tag(const std::string& tag_prefix, std::time_t) {
  if (auto e = scripted_failure("accounted_by_tag " + tag_prefix)) return std::unexpected(*e);
  Accounting out{accounting.available, {}};
  for (const auto& j : accounting.jobs)
    if (util::starts_with(j.comment, tag_prefix)) out.jobs.push_back(j);
  return out;
}

Result<NodeFailureHistory> FakeClient::node_failure_history(std::time_t since) {
  if (auto e = scripted_failure("node_failure_history " + std::to_string(since))) return std::unexpected(*e);
  return history;
}

Result<std::vector<Node>> FakeClient::nodes() {
  if (auto e = scripted_failure("nodes")) return std::unexpected(*e);
  return node_table;
}

Result<void> FakeClient::cancel(JobId id) {
  auto ok = on_known(id, "cancel");
  if (ok) set_state(id, JobState::Cancelled);
  return ok;
}

Result<void> FakeClient::signal(JobId id, int signal, bool batch_only) {
  return on_known(id, "signal " + std::to_string(signal) + (batch_only ? " batch" : " full"));
}

Result<void> FakeClient::signal_steps(JobId id, int signal) {
  return on_known(id, signal == 9 ? std::string("kill_steps") : "signal_steps " + std::to_string(signal));
}

Result<void> FakeClient::hold(JobId id) { return on_known(id, "hold"); }

Result<void> FakeClient::release(JobId id) { return on_known(id, "release"); }

Result<void> FakeClient::set_node_count(JobId id, int nodes, int tasks) {
  auto ok = on_known(id, "set_node_count " + std::to_string(nodes) + " " + std::to_string(tasks));
  if (ok) table[id].node_count = static_cast<std::uint32_t>(nodes);
  if (ok && tasks > 0) table[id].num_tasks = static_cast<std::uint32_t>(tasks);
  return ok;
}

Result<void> FakeClient::set_excluded(JobId id, const std::string& nodes) {
  auto ok = on_known(id, "set_excluded " + nodes);
  if (ok) table[id].excluded_nodes = nodes;
  return ok;
}

}  // namespace mlsup::slurm
