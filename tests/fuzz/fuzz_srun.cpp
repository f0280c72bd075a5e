// Fuzz target: srun's task reports in a job's output ("srun: error: n2: task 1: Exited with exit
// code 3"). Each node said to have failed on its own comes from a failed report.
#include <algorithm>

#include "fuzz_support.h"
#include "slurm/srun_messages.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace mlsup;
  const auto reports = slurm::srun_task_reports(fuzz::text_of(data, size));
  for (const auto& node : slurm::failed_task_nodes(reports)) {
    const bool reported = std::any_of(reports.begin(), reports.end(), [&](const auto& r) { return r.failed && r.node == node; });
    fuzz::check(reported, "a failed node comes from a failed report");
  }
  for (const auto& r : reports) fuzz::check(r.node.find(' ') == std::string::npos, "a node name has no space");
  return 0;
}
