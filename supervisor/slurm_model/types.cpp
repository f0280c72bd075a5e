#include "slurm_model/types.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <utility>

#include <slurm/slurm_errno.h>

#include "util/strings.h"

namespace mlsup::slurm {
namespace {

constexpr std::array<std::pair<JobState, std::string_view>, 13> kStateNames{{
    {JobState::Pending, "PENDING"},     {JobState::Running, "RUNNING"},     {JobState::Suspended, "SUSPENDED"},
    {JobState::Completed, "COMPLETED"}, {JobState::Cancelled, "CANCELLED"}, {JobState::Failed, "FAILED"},
    {JobState::Timeout, "TIMEOUT"},     {JobState::NodeFail, "NODE_FAIL"}, {JobState::Preempted, "PREEMPTED"},
    {JobState::BootFail, "BOOT_FAIL"},  {JobState::Deadline, "DEADLINE"},  {JobState::OutOfMemory, "OUT_OF_MEMORY"},
    {JobState::Unknown, "UNKNOWN"},
}};

constexpr std::array<std::pair<ErrorKind, std::string_view>, 8> kErrorNames{{
    {ErrorKind::Unreachable, "unreachable"}, {ErrorKind::Timeout, "timeout"}, {ErrorKind::UnknownJob, "unknown-job"},
    {ErrorKind::PermissionDenied, "permission-denied"}, {ErrorKind::Rejected, "rejected"},
    {ErrorKind::OverLimit, "over-limit"}, {ErrorKind::Busy, "busy"}, {ErrorKind::Other, "other"},
}};

// Slurm errnos by the kind of failure they are. Slurm gives one errno (and one message) to every
// accounting/QOS refusal, a submit limit that lifts as jobs end as well as a size or time limit.
constexpr std::array<std::pair<int, ErrorKind>, 24> kErrnoKinds{{
    {SLURM_COMMUNICATIONS_CONNECTION_ERROR, ErrorKind::Unreachable},
    {SLURM_COMMUNICATIONS_SEND_ERROR, ErrorKind::Unreachable},
    {SLURM_COMMUNICATIONS_RECEIVE_ERROR, ErrorKind::Unreachable},
    {SLURM_COMMUNICATIONS_SHUTDOWN_ERROR, ErrorKind::Unreachable},
    {SLURMCTLD_COMMUNICATIONS_CONNECTION_ERROR, ErrorKind::Unreachable},
    {SLURMCTLD_COMMUNICATIONS_SEND_ERROR, ErrorKind::Unreachable},
    {SLURMCTLD_COMMUNICATIONS_RECEIVE_ERROR, ErrorKind::Unreachable},
    {SLURMCTLD_COMMUNICATIONS_SHUTDOWN_ERROR, ErrorKind::Unreachable},
    {SLURM_PROTOCOL_SOCKET_IMPL_TIMEOUT, ErrorKind::Timeout},
    {ESLURM_INVALID_JOB_ID, ErrorKind::UnknownJob},
    {ESLURM_ACCESS_DENIED, ErrorKind::PermissionDenied},
    {ESLURM_USER_ID_MISSING, ErrorKind::PermissionDenied},
    {ESLURM_INVALID_PARTITION_NAME, ErrorKind::Rejected},
    {ESLURM_INVALID_NODE_COUNT, ErrorKind::Rejected},
    {ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE, ErrorKind::Rejected},
    {ESLURM_REQUESTED_PART_CONFIG_UNAVAILABLE, ErrorKind::Rejected},
    {ESLURM_TOO_MANY_REQUESTED_CPUS, ErrorKind::Rejected},
    {ESLURM_INVALID_TIME_LIMIT, ErrorKind::Rejected},
    {ESLURM_INVALID_QOS, ErrorKind::Rejected},
    {ESLURM_INVALID_ACCOUNT, ErrorKind::Rejected},
    {ESLURM_ACCOUNTING_POLICY, ErrorKind::OverLimit},
    {ESLURM_PARTITION_NOT_AVAIL, ErrorKind::Rejected},
    {ESLURM_DISABLED, ErrorKind::Busy},
    {EAGAIN, ErrorKind::Busy},
}};

// Words in the messages of Slurm's commands, by kind (checked in this order).
constexpr std::array<std::pair<std::string_view, ErrorKind>, 19> kMessageKinds{{
    {"Invalid job id", ErrorKind::UnknownJob},
    {"Unable to contact slurm controller", ErrorKind::Unreachable},
    {"Connection refused", ErrorKind::Unreachable},
    {"Unable to establish connection", ErrorKind::Unreachable},
    {"Zero Bytes were transmitted", ErrorKind::Unreachable},
    {"Socket timed out", ErrorKind::Timeout},
    {"timed out", ErrorKind::Timeout},
    {"Access/permission denied", ErrorKind::PermissionDenied},
    {"Invalid user id", ErrorKind::PermissionDenied},
    {"Invalid partition name", ErrorKind::Rejected},
    {"Node count specification invalid", ErrorKind::Rejected},
    {"Requested node configuration is not available", ErrorKind::Rejected},
    {"Requested partition configuration not available", ErrorKind::Rejected},
    {"More processors requested than permitted", ErrorKind::Rejected},
    {"Invalid qos", ErrorKind::Rejected},
    {"Invalid account", ErrorKind::Rejected},
    {"Job violates accounting/QOS policy", ErrorKind::OverLimit},
    {"Requested time limit is invalid", ErrorKind::Rejected},
    {"Resource temporarily unavailable", ErrorKind::Busy},
}};

// Bounds on what a hostlist expands to, so that no text makes the expansion run away: more names than
// any cluster has, a cap on the bytes of the names made on the way (room for every name at 127
// characters; the cap bounds the time: 8 MiB of short names take about 0.1 s), and a few bracket
// groups per name (Slurm's own lists stay far below all three).
constexpr std::size_t kMaxHostNames = 65536;
constexpr std::size_t kMaxHostBytes = 8u << 20;
constexpr int kMaxBracketGroups = 8;

struct Expansion {
  std::vector<std::string> names;
  std::size_t bytes = 0;  // of every name made, the partly expanded ones included

  bool full() const { return names.size() >= kMaxHostNames || bytes >= kMaxHostBytes; }
};

// Appends the names of one comma-free hostlist element, expanding its first bracket group (the names
// made expand the next group, depth counting the groups); past the bounds nothing more is added.
void expand_one(std::string_view item, Expansion& out, int depth) {
  const auto open = item.find('[');
  const auto close = item.find(']', open);
  if (open == std::string_view::npos || close == std::string_view::npos || depth == kMaxBracketGroups) {
    if (!item.empty() && !out.full()) out.names.emplace_back(item);
    return;
  }
  const std::string_view prefix = item.substr(0, open), suffix = item.substr(close + 1);
  for (const auto& range : util::split(item.substr(open + 1, close - open - 1), ',')) {
    const auto dash = range.find('-');
    const std::string first = range.substr(0, dash);
    const std::string last = dash == std::string::npos ? first : range.substr(dash + 1);
    unsigned a = 0, b = 0;
    std::from_chars(first.data(), first.data() + first.size(), a);
    std::from_chars(last.data(), last.data() + last.size(), b);
    for (std::uint64_t i = a; i <= b && !out.full(); ++i) {
      std::string number = std::to_string(i);
      if (number.size() < first.size()) number.insert(0, first.size() - number.size(), '0');
      const std::string name = std::string(prefix) + number + std::string(suffix);
      out.bytes += name.size() + 1;
      expand_one(name, out, depth + 1);
    }
  }
}

}  // namespace

std::string_view state_name(JobState s) {
  for (const auto& [state, name] : kStateNames)
    if (state == s) return name;
  return "UNKNOWN";
}

JobState state_from_name(std::string_view name) {
  if (name == "CD") return JobState::Completed;
  for (const auto& [state, n] : kStateNames)
    if (n == name) return state;
  if (name == "OOM") return JobState::OutOfMemory;
  return JobState::Unknown;
}

bool is_final(JobState s) {
  return s != JobState::Pending && s != JobState::Running && s != JobState::Suspended && s != JobState::Unknown;
}

std::string_view error_kind_name(ErrorKind k) {
  for (const auto& [kind, name] : kErrorNames)
    if (kind == k) return name;
  return "other";
}

ErrorKind error_kind_from_name(std::string_view name) {
  for (const auto& [kind, n] : kErrorNames)
    if (n == name) return kind;
  return ErrorKind::Other;
}

bool Error::transient() const {
  return kind == ErrorKind::Unreachable || kind == ErrorKind::Timeout || kind == ErrorKind::Busy;
}

ErrorKind classify_errno(int code) {
  for (const auto& [errno_value, kind] : kErrnoKinds)
    if (errno_value == code) return kind;
  return ErrorKind::Other;
}

ErrorKind classify_message(std::string_view message) {
  for (const auto& [words, kind] : kMessageKinds)
    if (message.find(words) != std::string_view::npos) return kind;
  return ErrorKind::Other;
}

bool batch_host_lost(const Job& job) {
  if (job.state != JobState::Running || job.batch_host.empty() || job.nodes.empty()) return false;
  const auto nodes = expand_hostlist(job.nodes);
  return std::find(nodes.begin(), nodes.end(), job.batch_host) == nodes.end();
}

bool already_over(const Error& e) {
  return e.code == ESLURM_ALREADY_DONE || e.message.find("already completing or completed") != std::string::npos;
}

std::vector<Job> with_ids(const std::vector<Job>& jobs, const std::vector<JobId>& ids) {
  std::vector<Job> out;
  for (const auto& job : jobs)
    if (std::any_of(ids.begin(), ids.end(), [&](JobId id) { return job.job_id == id || job.array_job_id == id; }))
      out.push_back(job);
  return out;
}

std::vector<Job> with_tag(const std::vector<Job>& jobs, const std::string& tag_prefix, std::optional<std::uint32_t> user_id) {
  std::vector<Job> out;
  for (const auto& job : jobs)
    if (util::starts_with(job.comment, tag_prefix) && (!user_id || job.user_id == *user_id)) out.push_back(job);
  return out;
}

std::vector<std::string> expand_hostlist(std::string_view hostlist) {
  Expansion out;
  std::size_t depth = 0, start = 0;
  for (std::size_t i = 0; i <= hostlist.size() && !out.full(); ++i) {
    if (i < hostlist.size() && hostlist[i] == '[') ++depth;
    if (i < hostlist.size() && hostlist[i] == ']' && depth > 0) --depth;
    if (i == hostlist.size() || (hostlist[i] == ',' && depth == 0)) {
      expand_one(util::trim(hostlist.substr(start, i - start)), out, 0);
      start = i + 1;
    }
  }
  return std::move(out.names);
}

std::map<std::string, std::vector<std::string>> other_names(const std::vector<Node>& nodes) {
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& n : nodes)
    for (const auto* name : {&n.address, &n.hostname})
      if (!name->empty() && *name != n.name) out[n.name].push_back(*name);
  return out;
}

}  // namespace mlsup::slurm
