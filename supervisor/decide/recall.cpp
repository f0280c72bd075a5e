#include "decide/recall.h"

#include <array>
#include <csignal>

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
  return Recalled{source, state_of_exit(*seen), seen->exit_code, seen->signal};
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
  if (e.signal == SIGTERM) return JobState::Timeout;
  return e.signal == 0 && e.exit_code == 0 ? JobState::Completed : JobState::Failed;
}

}  // namespace mlsup::decide
