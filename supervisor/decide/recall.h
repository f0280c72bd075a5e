#pragma once
// A job the controller has forgotten (MinJobAge passed before mlsup looked): how it ended, from the
// sources that outlive it, in order of trust. Accounting (slurmdbd) knows the state, the exit and who
// cancelled; the SPANK plugin's record of the batch script and the end record the script's first
// lines write see only the inside (a SIGKILL of the batch shell leaves no end record, and a person's
// cancel looks like a time limit), so they rank after it. Pure.
#include <optional>
#include <string_view>
#include <vector>

#include "slurm_model/accounting.h"
#include "slurm_model/types.h"

namespace mlsup::decide {

enum class EndSource { Accounting, PluginRecord, EndRecord };

// The source's name in the `ended` record and its event ("accounting", "plugin_record", "end_record").
std::string_view source_name(EndSource s);

// An exit seen from inside the job: its code, or the signal that ended it, and what Slurm said of the
// job when a SIGTERM came (nullopt: not asked, or no answer).
struct ExitSeen {
  int exit_code = 0;
  int signal = 0;
  std::optional<slurm::JobState> slurm_said;  // Timeout, Preempted or Cancelled
};

// What each source said; an absent one knows nothing.
struct Witnesses {
  std::vector<slurm::AccountedJob> accounted;  // accounting's records (empty: none, or no accounting)
  std::optional<ExitSeen> batch_exit;          // the plugin's record of the batch script's end
  std::optional<ExitSeen> end_record;          // the script's end record
};

// How the job ended, and which source said so.
struct Recalled {
  EndSource source = EndSource::Accounting;
  slurm::JobState state = slurm::JobState::Unknown;
  int exit_code = 0;
  int exit_signal = 0;
};

// The first source that knows how job `id` ended; nullopt when none does (accounting's record of a
// job it still shows running does not count).
std::optional<Recalled> recall_ending(slurm::JobId id, const Witnesses& w);

// The state an exit seen from inside stands for: 0 completed, any other code or signal a failure, but
// SIGTERM (a time limit, a preemption or a cancel: inside they look alike) what Slurm said of the job
// then, and Unknown when it said nothing (the source does not know the end).
slurm::JobState state_of_exit(const ExitSeen& e);

// What Slurm's record of a job (`scontrol -o show job`, asked as SIGTERM came) says ended it: PREEMPTED
// when it was preempted, TIMEOUT when it ran to its time limit, else CANCELLED (a person, an admin);
// nullopt for a record that says neither (no StartTime or EndTime).
std::optional<slurm::JobState> ended_by(std::string_view scontrol_record);

}  // namespace mlsup::decide
