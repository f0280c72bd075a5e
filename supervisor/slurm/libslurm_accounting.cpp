#include "slurm/libslurm_accounting.h"

#include <cstdlib>
#include <sys/wait.h>
#include <unistd.h>

extern "C" {
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <slurm/slurmdb.h>
}

#include "util/strings.h"

namespace mlsup::slurm {
namespace {

Error last_error(const std::string& what) {
  const int code = slurm_get_errno();
  const char* text = slurm_strerror(code);
  return Error{classify_errno(code), code, what + ": " + (text ? text : "")};
}

// A list of strings or selected steps for a job condition; freed with the condition.
List id_list(const std::vector<JobId>& ids) {
  List list = slurm_list_create(std::free);
  for (JobId id : ids) {
    auto* step = static_cast<slurm_selected_step_t*>(std::calloc(1, sizeof(slurm_selected_step_t)));
    step->array_task_id = NO_VAL;
    step->het_job_offset = NO_VAL;
    step->step_id = {id, NO_VAL, NO_VAL};
    slurm_list_append(list, step);
  }
  return list;
}

// A list of one string (a uid, a cluster name).
List one_string(const std::string& s) {
  List list = slurm_list_create(std::free);
  char* copy = static_cast<char*>(std::calloc(s.size() + 1, 1));
  s.copy(copy, s.size());
  slurm_list_append(list, copy);
  return list;
}

AccountedJob to_accounted(const slurmdb_job_rec_t& r) {
  AccountedJob job;
  job.job_id = r.jobid;
  if (r.array_job_id != 0 && r.array_task_id != NO_VAL) job.array_job_id = r.array_job_id;
  job.state = job_state_of(r.state);
  const int status = static_cast<int>(r.exitcode);
  if (WIFEXITED(status)) job.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) job.exit_signal = WTERMSIG(status);
  if (job.state == JobState::Cancelled && r.requid != NO_VAL && r.requid != INFINITE) job.cancelled_by = r.requid;
  if (r.derived_es) job.comment = r.derived_es;  // where slurmdbd keeps the job's comment
  return job;
}

}  // namespace

JobState job_state_of(std::uint32_t state) {
  static const JobState kStates[] = {
      JobState::Pending, JobState::Running, JobState::Suspended, JobState::Completed, JobState::Cancelled,
      JobState::Failed, JobState::Timeout, JobState::NodeFail, JobState::Preempted, JobState::BootFail,
      JobState::Deadline, JobState::OutOfMemory};
  const std::uint32_t base = state & JOB_STATE_BASE;
  return base < std::size(kStates) ? kStates[base] : JobState::Unknown;
}

Result<std::string> accounted_cluster() {
  slurm_conf_t* conf = nullptr;
  if (slurm_load_ctl_conf(0, &conf) != SLURM_SUCCESS) return std::unexpected(last_error("the controller's configuration"));
  const std::string type = conf->accounting_storage_type ? conf->accounting_storage_type : "";
  const std::string cluster = conf->cluster_name ? conf->cluster_name : "";
  slurm_free_ctl_conf(conf);
  return type.empty() || type == "accounting_storage/none" ? "" : cluster;
}

namespace {

// Frees what a job condition holds (its lists).
void free_condition(slurmdb_job_cond_t& cond) {
  if (cond.step_list) slurm_list_destroy(cond.step_list);
  if (cond.userid_list) slurm_list_destroy(cond.userid_list);
  if (cond.cluster_list) slurm_list_destroy(cond.cluster_list);
}

// A condition for one record per job (no steps) of this cluster; freed with free_condition.
slurmdb_job_cond_t job_condition(const std::string& cluster) {
  slurmdb_job_cond_t cond{};
  cond.flags = JOBCOND_FLAG_NO_STEP;
  cond.db_flags = SLURMDB_JOB_FLAG_NOTSET;  // 0 would ask for jobs with no scheduling flag set: none
  cond.cluster_list = one_string(cluster);
  return cond;
}

// Calls visit with each job record cond selects: one slurmdbd request; frees cond.
template <typename Visit>
Result<void> each_job_record(slurmdb_job_cond_t& cond, Visit visit) {
  void* db = slurmdb_connection_get(nullptr);
  if (!db) {
    free_condition(cond);
    return std::unexpected(last_error("slurmdbd"));
  }
  List found = slurmdb_jobs_get(db, &cond);
  const Result<void> result = found ? Result<void>{} : std::unexpected(last_error("slurmdbd's job query"));
  if (found) {
    ListIterator it = slurm_list_iterator_create(found);
    while (auto* r = static_cast<slurmdb_job_rec_t*>(slurm_list_next(it))) visit(*r);
    slurm_list_iterator_destroy(it);
    slurm_list_destroy(found);
  }
  free_condition(cond);
  slurmdb_connection_close(&db);
  return result;
}

}  // namespace

Result<std::vector<AccountedJob>> slurmdb_accounted(const AccountingFilter& filter) {
  slurmdb_job_cond_t cond = job_condition(filter.cluster);
  if (!filter.ids.empty()) {
    cond.step_list = id_list(filter.ids);
  } else {
    cond.userid_list = one_string(std::to_string(::getuid()));
    cond.usage_start = filter.since;
    cond.usage_end = std::time(nullptr) + 60;
  }
  std::vector<AccountedJob> out;
  const auto done = each_job_record(cond, [&](const slurmdb_job_rec_t& r) {
    AccountedJob job = to_accounted(r);
    if (filter.ids.empty() && !util::starts_with(job.comment, filter.tag_prefix)) return;
    out.push_back(std::move(job));
  });
  if (!done) return std::unexpected(done.error());
  return out;
}

Result<NodeFailureHistory> slurmdb_node_failures(const std::string& cluster, std::time_t since) {
  slurmdb_job_cond_t cond = job_condition(cluster);  // no user list: every user's jobs
  cond.usage_start = since;
  cond.usage_end = std::time(nullptr) + 60;
  NodeFailureHistory h{.available = true};
  const auto done = each_job_record(cond, [&](const slurmdb_job_rec_t& r) {
    const JobState state = job_state_of(r.state);
    if (!is_final(state) || r.end < since) return;  // not ended in the window
    if (r.start > 0 && r.end > r.start) h.node_seconds += static_cast<double>(r.alloc_nodes) * static_cast<double>(r.end - r.start);
    h.node_failures += state == JobState::NodeFail ? 1 : 0;
  });
  if (!done) return std::unexpected(done.error());
  return h;
}

}  // namespace mlsup::slurm
