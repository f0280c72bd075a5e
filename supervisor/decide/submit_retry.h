#pragma once
// What to do after sbatch failed to submit an attempt: try again after a growing delay, or give up
// once refusals that may pass have gone on for policy.submit_retry_for. Pure: every input is a value.
#include <cstddef>
#include <string>
#include <vector>

#include "config/config.h"
#include "slurm/types.h"

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

// Decides, from one attempt's failed submissions since its last success (oldest first), whether to
// submit now, wait, or stop the campaign.
SubmitRetry submit_retry(const std::vector<SubmitFailure>& failures, const config::Config& config, double now);

}  // namespace mlsup::decide
