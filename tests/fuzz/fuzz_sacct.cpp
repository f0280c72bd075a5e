// Fuzz target: `sacct -X -n -P` lines as the command-line backend reads them (its jobs, and the cluster's node
// failure history), and the end record a job's script writes: whatever they hold, the readers return values in
// range or nothing.
#include "fuzz_support.h"
#include "observe/end_record.h"
#include "slurm_model/sacct_text.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace mlsup;
  const auto text = fuzz::text_of(data, size);
  for (const auto& job : slurm::parse_sacct(text)) {
    fuzz::check(job.job_id != 0, "an accounted job has an id");
    fuzz::check(job.exit_code >= 0 && job.exit_code <= 255 && job.exit_signal >= 0 && job.exit_signal <= 255,
                "exit code and signal are in range");
    fuzz::check(!job.cancelled_by || job.state == slurm::JobState::Cancelled, "only a cancelled job has a canceller");
  }
  const auto history = slurm::parse_node_failure_history(text);
  fuzz::check(history.node_seconds >= 0 && history.node_failures >= 0, "a node failure history counts up from zero");
  slurm::accounting_disabled(text);
  if (const auto r = observe::parse_end_record(text))
    fuzz::check(r->exit_code >= 0 && r->exit_code <= 255 && r->signal >= 0 && r->signal <= 255, "an end record is in range");
  return 0;
}
