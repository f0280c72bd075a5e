#pragma once
// What to do after sbatch failed to submit an attempt: try again after a growing delay, or give up
// once refusals that may pass have gone on for policy.submit_retry_for. Pure: every input is a value.
#include <cstddef>
#include <string>
#include <vector>

#include "config/config.h"
#include "slurm_model/types.h"

namespace mlsup::decide {

// One failed submission, as the journal records it.
struct SubmitFailure {
  double time = 0;  // unix seconds
  slurm::ErrorKind kind = slurm::ErrorKind::Other;
  std::string message;  // what Slurm said
};

enum class SubmitStep { Try, Wait, Stop };

struct SubmitRetry {
  SubmitStep step = SubmitStep::Try;
  double next_try = 0;  // Try, Wait: the earliest time of the next submission
  bool alert = false;   // the newest failure is the one that makes them repeated: tell people (once)
  std::string reason;   // one sentence for the event log; for Stop, the campaign's last word
};

// Failures in a row after which people are told.
inline constexpr std::size_t kSubmitAlertAfter = 3;

// Looks by tag that must find nothing, after an sbatch whose outcome is unknown, before another sbatch.
inline constexpr int kAbsentLooks = 3;

// True when an sbatch that failed this way may still have created the job (Slurm did not refuse it).
bool outcome_unknown(slurm::ErrorKind kind);

// Decides, from one attempt's failed submissions since its last success (oldest first), whether to
// submit now, wait, or stop the campaign. After a failure of unknown outcome, the next try is no
// sooner than policy.submit_unknown_grace after it (and the caller also waits for kAbsentLooks).
SubmitRetry submit_retry(const std::vector<SubmitFailure>& failures, const config::Config& config, double now);

}  // namespace mlsup::decide
