#include "decide/recall.h"

#include <array>
#include <csignal>

#include "slurm_model/scontrol_text.h"

namespace mlsup::decide {
namespace {

using slurm::JobState;

std::optional<Recalled> from_accounting(slurm::JobId id, const Witnesses& w) {
  for (const auto& j : w.accounted)
    if (j.job_id == id && slurm::is_final(j.state)) return Recalled{EndSource::Accounting, j.state, j.exit_code, j.exit_signal};
  return std::nullopt;
}

std::optional<Recalled> from_inside(EndSource source, const std::optional<ExitSeen>& seen) {
  if (!seen) return std::nullopt;
  const JobState state = state_of_exit(*seen);
  if (state == JobState::Unknown) return std::nullopt;
  return Recalled{source, state, seen->exit_code, seen->signal};
}

std::optional<Recalled> from_plugin(slurm::JobId, const Witnesses& w) { return from_inside(EndSource::PluginRecord, w.batch_exit); }

std::optional<Recalled> from_end_record(slurm::JobId, const Witnesses& w) { return from_inside(EndSource::EndRecord, w.end_record); }

struct SourceRow {
  EndSource source;
  std::string_view name;
  std::optional<Recalled> (*ask)(slurm::JobId, const Witnesses&);
};

// The sources in the order they are trusted.
constexpr std::array<SourceRow, 3> kSources{{
    {EndSource::Accounting, "accounting", from_accounting},
    {EndSource::PluginRecord, "plugin_record", from_plugin},
    {EndSource::EndRecord, "end_record", from_end_record},
}};

}  // namespace

std::string_view source_name(EndSource s) {
  for (const auto& row : kSources)
    if (row.source == s) return row.name;
  return "?";
}

std::optional<Recalled> recall_ending(slurm::JobId id, const Witnesses& w) {
  for (const auto& row : kSources)
    if (auto found = row.ask(id, w)) return found;
  return std::nullopt;
}

JobState state_of_exit(const ExitSeen& e) {
  if (e.signal == SIGTERM) return e.slurm_said.value_or(JobState::Unknown);
  return e.signal == 0 && e.exit_code == 0 ? JobState::Completed : JobState::Failed;
}

std::optional<JobState> ended_by(std::string_view scontrol_record) {
  const auto records = slurm::parse_records(scontrol_record);
  if (records.empty()) return std::nullopt;
  const auto& r = records.front();
  const auto preempted = r.find("PreemptTime");
  if (preempted != r.end() && !preempted->second.empty() && preempted->second != "None") return JobState::Preempted;
  const slurm::Job job = slurm::job_from_record(r);
  for (const JobState shown : {JobState::Timeout, JobState::Preempted, JobState::Cancelled})
    if (job.state == shown) return shown;
  if (job.start_time <= 0 || job.end_time <= 0) return std::nullopt;
  if (!job.time_limit_minutes) return JobState::Cancelled;  // no time limit to reach
  const auto limit = static_cast<std::time_t>(*job.time_limit_minutes) * 60;
  return job.end_time - job.start_time >= limit - 1 ? JobState::Timeout : JobState::Cancelled;
}

}  // namespace mlsup::decide
