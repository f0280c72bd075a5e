// The command-line backend: for sites whose libslurm headers or release differ from the build's.
// One process per request: `scontrol -o show job` answers every job in one RPC.
#include <cctype>
#include <csignal>
#include <ctime>
#include <unistd.h>

#include "edges/process.h"
#include "slurm/client.h"
#include "slurm/sbatch.h"
#include "slurm_model/sacct_text.h"
#include "slurm_model/scontrol_text.h"
#include "util/strings.h"

namespace mlsup::slurm {
namespace {

// Runs one Slurm command; its stdout, or the error its stderr describes.
Result<std::string> command(std::vector<std::string> argv) {
  edges::ProcessRequest request;
  request.argv = std::move(argv);
  request.timeout = std::chrono::seconds(60);
  const auto r = edges::run_process(request);
  if (!r.started) return std::unexpected(Error{ErrorKind::Other, 0, "cannot run " + request.argv[0] + ": " + r.start_error});
  if (r.timed_out) return std::unexpected(Error{ErrorKind::Timeout, 0, request.argv[0] + " did not finish in time"});
  if (r.exit_code != 0) {
    const std::string message(util::trim(r.err.empty() ? r.out : r.err));
    return std::unexpected(Error{classify_message(message), 0, message});
  }
  return r.out;
}

Result<void> done(const Result<std::string>& r) {
  if (!r) return std::unexpected(r.error());
  return {};
}

// scancel exits 0 even when it failed, and says why only when verbose: read its stderr.
Result<void> scancel(std::vector<std::string> args) {
  edges::ProcessRequest request;
  request.argv = {"scancel", "--verbose"};
  request.argv.insert(request.argv.end(), args.begin(), args.end());
  request.timeout = std::chrono::seconds(60);
  const auto r = edges::run_process(request);
  if (!r.started) return std::unexpected(Error{ErrorKind::Other, 0, "cannot run scancel: " + r.start_error});
  if (r.timed_out) return std::unexpected(Error{ErrorKind::Timeout, 0, "scancel did not finish in time"});
  const auto at = r.err.find("error: ");
  if (r.exit_code == 0 && at == std::string::npos) return {};
  // --verbose also prints "error" lines that carry no error ("Kill job error on job step id 86: No
  // error", seen when signalling a step of an array task): those are not failures.
  if (r.exit_code == 0 && at != std::string::npos && r.err.find(": No error") != std::string::npos &&
      util::split(std::string(util::trim(r.err.substr(at))), '\n').size() == 1)
    return {};
  const std::string message(util::trim(at == std::string::npos ? r.err : r.err.substr(at)));
  return std::unexpected(Error{classify_message(message), 0, message});
}

const char* signal_name(int sig) {
  switch (sig) {
    case SIGUSR1: return "USR1";
    case SIGUSR2: return "USR2";
    case SIGTERM: return "TERM";
    case SIGINT: return "INT";
    case SIGHUP: return "HUP";
    case SIGKILL: return "KILL";
    case SIGCONT: return "CONT";
    case SIGURG: return "URG";
    case SIGWINCH: return "WINCH";
    case SIGSTOP: return "STOP";
    default: return nullptr;
  }
}

class CliClient final : public Client {
 public:
  Result<JobId> submit(const SubmitRequest& request) override { return submit_with_sbatch(request); }

  Result<std::vector<Job>> jobs(const std::vector<JobId>& ids) override {
    auto all = all_jobs();
    if (!all) return all;
    return with_ids(*all, ids);
  }

  Result<std::vector<Job>> find_by_tag(const std::string& tag_prefix) override {
    auto all = all_jobs();
    if (!all) return all;
    return with_tag(*all, tag_prefix, ::getuid());
  }

  Result<Accounting> accounted(const std::vector<JobId>& ids) override {
    std::vector<std::string> list;
    for (JobId id : ids) list.push_back(std::to_string(id));
    if (list.empty()) return Accounting{true, {}};
    return sacct({"-j", util::join(list, ",")});
  }

  Result<Accounting> accounted_by_tag(const std::string& tag_prefix, std::time_t since) override {
    auto found = sacct({"-S", sacct_time(since), "-E", "now"});
    if (!found) return found;
    std::erase_if(found->jobs, [&](const AccountedJob& j) { return !util::starts_with(j.comment, tag_prefix); });
    return found;
  }

  Result<NodeFailureHistory> node_failure_history(std::time_t since) override {
    auto out = command({"sacct", "-a", "-X", "-n", "-P", "-S", sacct_time(since), "-E", "now",
                        "--format=" + std::string(kSacctHistoryFormat)});
    if (!out && accounting_disabled(out.error().message)) return NodeFailureHistory{};
    if (!out) return std::unexpected(out.error());
    return parse_node_failure_history(*out);
  }

  Result<std::vector<Node>> nodes() override {
    auto out = command({"scontrol", "-o", "show", "node"});
    if (!out) return std::unexpected(out.error());
    std::vector<Node> nodes;
    for (const auto& r : parse_records(*out)) nodes.push_back(node_from_record(r));
    return nodes;
  }

  Result<void> cancel(JobId id) override {
    return with_task_form(id, [](const std::string& ref) { return scancel({ref}); });
  }

  Result<void> signal(JobId id, int sig, bool batch_only) override {
    const char* name = signal_name(sig);
    if (!name) return std::unexpected(Error{ErrorKind::Rejected, 0, "signal " + std::to_string(sig) + " has no name scancel knows"});
    return with_task_form(id, [&](const std::string& ref) {
      return scancel({std::string("--signal=") + name, batch_only ? "--batch" : "--full", ref});
    });
  }

  // scancel signals a whole job only as a cancel (with the grace); steps it signals at once.
  Result<void> signal_steps(JobId id, int sig) override {
    const char* name = signal_name(sig);
    if (!name) return std::unexpected(Error{ErrorKind::Rejected, 0, "signal " + std::to_string(sig) + " has no name scancel knows"});
    return with_task_form(id, [this, name](const std::string& ref) -> Result<void> {
      auto out = command({"squeue", "-h", "-s", "-j", ref, "-o", "%i"});
      if (!out) return std::unexpected(out.error());
      for (const auto& line : util::split(*out, '\n')) {
        const auto step = util::trim(line);
        const auto dot = step.find('.');
        if (dot == std::string_view::npos || dot + 1 >= step.size() || !std::isdigit(static_cast<unsigned char>(step[dot + 1])))
          continue;  // the batch and extern steps stay
        auto done = scancel({std::string("--signal=") + name, std::string(step)});
        // a step that ended, or began to end, meanwhile is fine
        if (!done && done.error().kind != ErrorKind::UnknownJob && !already_over(done.error())) return done;
      }
      return {};
    });
  }

  Result<void> hold(JobId id) override { return done(command({"scontrol", "hold", std::to_string(id)})); }

  Result<void> release(JobId id) override { return done(command({"scontrol", "release", std::to_string(id)})); }

  Result<void> set_excluded(JobId id, const std::string& nodes) override {
    return done(command({"scontrol", "update", "JobId=" + std::to_string(id), "ExcNodeList=" + nodes}));
  }

  Result<void> set_node_count(JobId id, int nodes, int tasks) override {
    std::vector<std::string> argv{"scontrol", "update", "JobId=" + std::to_string(id), "NumNodes=" + std::to_string(nodes)};
    if (tasks > 0) argv.push_back("NumTasks=" + std::to_string(tasks));
    return done(command(argv));
  }

  std::string backend() const override { return "cli"; }

 private:
  // Runs act on the job's id; a task of an array answers only to "ARRAY_TASK", so when its own id
  // is refused as invalid, act runs once more with that form.
  template <typename Act>
  Result<void> with_task_form(JobId id, Act act) {
    auto done = act(std::to_string(id));
    if (done || done.error().kind != ErrorKind::UnknownJob) return done;
    auto out = command({"scontrol", "-o", "show", "job", std::to_string(id)});
    if (!out) return done;
    for (const auto& r : parse_records(*out)) {
      const Job j = job_from_record(r);
      if (j.job_id == id && j.array_job_id && j.array_task_id)
        return act(std::to_string(j.array_job_id) + "_" + std::to_string(*j.array_task_id));
    }
    return done;
  }

  // A time as sacct's -S reads it: local time, to the second.
  static std::string sacct_time(std::time_t t) {
    char text[32] = {};
    std::tm local{};
    ::localtime_r(&t, &local);
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &local);
    return text;
  }

  // One sacct (one record per job, no steps); a site without accounting answers `available = false`.
  static Result<Accounting> sacct(std::vector<std::string> args) {
    std::vector<std::string> argv{"sacct", "-X", "-n", "-P", "--format=" + std::string(kSacctFormat)};
    argv.insert(argv.end(), args.begin(), args.end());
    auto out = command(std::move(argv));
    if (!out && accounting_disabled(out.error().message)) return Accounting{};
    if (!out) return std::unexpected(out.error());
    return Accounting{true, parse_sacct(*out)};
  }

  Result<std::vector<Job>> all_jobs() {
    auto out = command({"scontrol", "-o", "show", "job"});
    if (!out) {
      // With no job at all in the controller's memory scontrol says so on stdout and exits 0;
      // anything else is a real error.
      return std::unexpected(out.error());
    }
    std::vector<Job> jobs;
    for (const auto& r : parse_records(*out))
      if (r.contains("JobId")) jobs.push_back(job_from_record(r));
    return jobs;
  }
};

}  // namespace

std::unique_ptr<Client> make_cli_client() { return std::make_unique<CliClient>(); }

std::unique_ptr<Client> make_client(const std::string& backend) {
  if (backend == "libslurm" || backend == "auto") return make_libslurm_client();
  if (backend == "cli") return make_cli_client();
  return nullptr;
}

}  // namespace mlsup::slurm
