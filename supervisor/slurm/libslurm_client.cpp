// The libslurm backend: one RPC per query, signal, update or cancel; submission through sbatch.
// libslurm is not documented as thread-safe: every call is serialised by one mutex.
#include <csignal>
#include <mutex>
#include <optional>
#include <sys/wait.h>
#include <unistd.h>

extern "C" {
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
// Exported by libslurm 22.05 but missing from its public header.
char* slurm_job_reason_string(enum job_state_reason inx);
}

#include "slurm/client.h"
#include "slurm/libslurm_accounting.h"
#include "slurm/sbatch.h"
#include "util/strings.h"

namespace mlsup::slurm {
namespace {

// SHOW_LOCAL: this cluster only, which spares the federation lookup (one more RPC) per query.
constexpr uint16_t kShowFlags = SHOW_ALL | SHOW_LOCAL;

constexpr const char* kNodeStates[] = {"UNKNOWN", "DOWN", "IDLE", "ALLOCATED", "ERROR", "MIXED", "FUTURE"};

std::string text(const char* s) { return s ? s : ""; }

Error last_error() {
  const int code = slurm_get_errno();
  return Error{classify_errno(code), code, text(slurm_strerror(code))};
}

Job to_job(job_info_t& j) {
  Job job;
  job.job_id = j.job_id;
  job.array_job_id = j.array_job_id;
  if (j.array_job_id != 0 && j.array_task_id != NO_VAL) job.array_task_id = j.array_task_id;
  job.array_task_pending = text(j.array_task_str);
  job.name = text(j.name);
  job.comment = text(j.comment);
  job.state = job_state_of(j.job_state);
  job.completing = (j.job_state & JOB_COMPLETING) != 0;
  job.reason = text(slurm_job_reason_string(static_cast<enum job_state_reason>(j.state_reason)));
  if (WIFEXITED(j.exit_code)) job.exit_code = WEXITSTATUS(j.exit_code);
  if (WIFSIGNALED(j.exit_code)) job.exit_signal = WTERMSIG(j.exit_code);
  job.nodes = text(j.nodes);
  job.excluded_nodes = text(j.exc_nodes);
  job.batch_host = text(j.batch_host);
  job.partition = text(j.partition);
  job.node_count = j.num_nodes;
  job.num_tasks = j.num_tasks;
  job.user_id = j.user_id;
  job.submit_time = j.submit_time;
  job.start_time = j.start_time;
  job.end_time = j.end_time;
  if (j.time_limit != INFINITE && j.time_limit != NO_VAL) job.time_limit_minutes = j.time_limit;
  char out[4096] = {};
  slurm_get_job_stdout(out, sizeof out, &j);
  job.std_out = out;
  char err[4096] = {};
  slurm_get_job_stderr(err, sizeof err, &j);
  job.std_err = err;
  return job;
}

class LibslurmClient final : public Client {
 public:
  explicit LibslurmClient(QueryScope scope) : scope_(scope) {
    std::lock_guard lock(mutex_);
    slurm_init(nullptr);
  }

  ~LibslurmClient() override {
    if (table_) slurm_free_job_info_msg(table_);
  }

  Result<JobId> submit(const SubmitRequest& request) override { return submit_with_sbatch(request); }

  Result<std::vector<Job>> jobs(const std::vector<JobId>& ids) override {
    auto all = user_jobs();
    if (!all) return all;
    return with_ids(*all, ids);
  }

  Result<std::vector<Job>> find_by_tag(const std::string& tag_prefix) override {
    auto all = user_jobs();
    if (!all) return all;
    return with_tag(*all, tag_prefix);
  }

  Result<Accounting> accounted(const std::vector<JobId>& ids) override { return accounting({ids, "", 0, ""}); }

  Result<Accounting> accounted_by_tag(const std::string& tag_prefix, std::time_t since) override {
    return accounting({{}, tag_prefix, since, ""});
  }

  Result<NodeFailureHistory> node_failure_history(std::time_t since) override {
    std::lock_guard lock(mutex_);
    auto cluster = accounted_cluster_name();
    if (!cluster) return std::unexpected(cluster.error());
    if (cluster->empty()) return NodeFailureHistory{};
    return slurmdb_node_failures(*cluster, since);
  }

  Result<std::vector<Node>> nodes() override {
    std::lock_guard lock(mutex_);
    node_info_msg_t* msg = nullptr;
    if (slurm_load_node(0, &msg, SHOW_ALL) != SLURM_SUCCESS) return std::unexpected(last_error());
    std::vector<Node> out;
    for (uint32_t i = 0; i < msg->record_count; ++i) {
      const node_info_t& n = msg->node_array[i];
      if (!n.name) continue;
      const uint32_t base = n.node_state & NODE_STATE_BASE;
      out.push_back(Node{text(n.name), base < std::size(kNodeStates) ? kNodeStates[base] : "UNKNOWN",
                         (n.node_state & NODE_STATE_DRAIN) != 0, (n.node_state & NODE_STATE_NO_RESPOND) != 0,
                         text(n.reason), n.partitions && *n.partitions ? util::split(n.partitions, ',') : std::vector<std::string>{},
                         text(n.node_addr), text(n.node_hostname)});
    }
    slurm_free_node_info_msg(msg);
    return out;
  }

  Result<void> cancel(JobId id) override {
    std::lock_guard lock(mutex_);
    return kill(id, SIGKILL, 0);
  }

  Result<void> signal(JobId id, int sig, bool batch_only) override {
    std::lock_guard lock(mutex_);
    return kill(id, static_cast<uint16_t>(sig), batch_only ? KILL_JOB_BATCH : KILL_FULL_JOB);
  }

  // Each step that exists now, by its id: a signal to "every step" reaches a slow node late (the
  // controller's agent retries for tens of seconds at width) and kills the step started after it.
  Result<void> signal_steps(JobId id, int sig) override {
    std::lock_guard lock(mutex_);
    job_step_info_response_msg_t* steps = nullptr;
    if (slurm_get_job_steps(0, id, NO_VAL, &steps, SHOW_ALL) != SLURM_SUCCESS) {
      const Error e = last_error();
      return already_over(e) || e.kind == ErrorKind::UnknownJob ? Result<void>{} : std::unexpected(e);
    }
    std::vector<uint32_t> ids;
    for (uint32_t i = 0; i < steps->job_step_count; ++i)
      if (const uint32_t s = steps->job_steps[i].step_id.step_id; s < SLURM_INTERACTIVE_STEP) ids.push_back(s);
    slurm_free_job_step_info_response_msg(steps);
    for (const uint32_t s : ids) {
      if (slurm_kill_job_step(id, s, static_cast<uint16_t>(sig)) == SLURM_SUCCESS) continue;
      const Error e = last_error();  // a step that ended, or began to end, meanwhile is fine
      if (e.kind != ErrorKind::UnknownJob && !already_over(e)) return std::unexpected(e);
    }
    return {};
  }

  Result<void> hold(JobId id) override { return update(id, [](job_desc_msg_t& d) { d.priority = 0; }); }

  Result<void> release(JobId id) override { return update(id, [](job_desc_msg_t& d) { d.priority = INFINITE; }); }

  Result<void> set_node_count(JobId id, int nodes, int tasks) override {
    return update(id, [&](job_desc_msg_t& d) {
      d.min_nodes = d.max_nodes = static_cast<uint32_t>(nodes);
      if (tasks > 0) d.num_tasks = static_cast<uint32_t>(tasks);
    });
  }

  Result<void> set_excluded(JobId id, const std::string& nodes) override {
    std::string copy = nodes;
    return update(id, [&](job_desc_msg_t& d) { d.exc_nodes = copy.data(); });
  }

  std::string backend() const override { return "libslurm"; }

 private:
  // The jobs the scope covers, in one RPC.
  // Signals or cancels one job. A task of an array answers only to "ARRAY_TASK": its own job id is
  // refused as invalid, so that refusal is followed by a look-up and a second try in that form.
  Result<void> kill(JobId id, uint16_t sig, uint16_t flags) {
    if (slurm_kill_job(id, sig, flags) == SLURM_SUCCESS) return {};
    const Error refused = last_error();
    if (refused.kind != ErrorKind::UnknownJob) return std::unexpected(refused);
    job_info_msg_t* msg = nullptr;
    if (slurm_load_job(&msg, id, kShowFlags) != SLURM_SUCCESS) return std::unexpected(refused);
    std::string task;
    for (uint32_t i = 0; i < msg->record_count; ++i) {
      const job_info_t& j = msg->job_array[i];
      if (j.job_id == id && j.array_job_id != 0 && j.array_task_id != NO_VAL)
        task = std::to_string(j.array_job_id) + "_" + std::to_string(j.array_task_id);
    }
    slurm_free_job_info_msg(msg);
    if (task.empty()) return std::unexpected(refused);
    return check(slurm_kill_job2(task.c_str(), sig, flags, nullptr));
  }

  Result<std::vector<Job>> user_jobs() {
    std::lock_guard lock(mutex_);
    return scope_ == QueryScope::User ? load_user() : load_all();
  }

  Result<std::vector<Job>> load_user() {
    job_info_msg_t* msg = nullptr;
    if (slurm_load_job_user(&msg, ::getuid(), kShowFlags) != SLURM_SUCCESS) return std::unexpected(last_error());
    auto jobs = convert(*msg);
    slurm_free_job_info_msg(msg);
    return jobs;
  }

  // The whole table, asked for "changes since the last answer"; an unchanged table is not resent.
  Result<std::vector<Job>> load_all() {
    job_info_msg_t* msg = nullptr;
    const std::time_t since = table_ ? table_->last_update : 0;
    if (slurm_load_jobs(since, &msg, kShowFlags) != SLURM_SUCCESS) {
      if (slurm_get_errno() == SLURM_NO_CHANGE_IN_DATA && table_) return cached_;
      return std::unexpected(last_error());
    }
    if (table_) slurm_free_job_info_msg(table_);
    table_ = msg;
    cached_.clear();
    for (auto& job : convert(*msg))
      if (job.user_id == ::getuid()) cached_.push_back(std::move(job));
    return cached_;
  }

  static std::vector<Job> convert(job_info_msg_t& msg) {
    std::vector<Job> out;
    out.reserve(msg.record_count);
    for (uint32_t i = 0; i < msg.record_count; ++i) out.push_back(to_job(msg.job_array[i]));
    return out;
  }

  // Turns a libslurm return code into a result; call with mutex_ held (errno is per call).
  static Result<void> check(int rc) {
    if (rc == SLURM_SUCCESS) return {};
    return std::unexpected(last_error());
  }

  // Accounting's answer; whether the site has accounting is asked once (the configuration's).
  Result<Accounting> accounting(AccountingFilter filter) {
    std::lock_guard lock(mutex_);
    auto cluster = accounted_cluster_name();
    if (!cluster) return std::unexpected(cluster.error());
    if (cluster->empty()) return Accounting{};
    filter.cluster = *cluster;
    auto jobs = slurmdb_accounted(filter);
    if (!jobs) return std::unexpected(jobs.error());
    return Accounting{true, std::move(*jobs)};
  }

  // The cluster's name where the site has accounting, else "": asked once (the configuration's); call with mutex_ held.
  Result<std::string> accounted_cluster_name() {
    if (!cluster_) {
      auto cluster = accounted_cluster();
      if (!cluster) return std::unexpected(cluster.error());
      cluster_ = *cluster;
    }
    return *cluster_;
  }

  template <typename Fill>
  Result<void> update(JobId id, Fill fill) {
    std::lock_guard lock(mutex_);
    job_desc_msg_t desc;
    slurm_init_job_desc_msg(&desc);
    desc.job_id = id;
    fill(desc);
    return check(slurm_update_job(&desc));
  }

  std::mutex mutex_;
  QueryScope scope_;
  job_info_msg_t* table_ = nullptr;  // QueryScope::All: the last full answer
  std::vector<Job> cached_;          // this user's jobs in table_
  std::optional<std::string> cluster_;  // the cluster's name where the site has accounting, else ""
};

}  // namespace

std::unique_ptr<Client> make_libslurm_client(QueryScope scope) { return std::make_unique<LibslurmClient>(scope); }

}  // namespace mlsup::slurm
