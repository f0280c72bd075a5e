// Fuzz target: srun's task reports in a job's output ("srun: error: n2: task 1: Exited with exit
// code 3"). The first abnormal end comes from a report, and its node is never among its victims.
#include <algorithm>

#include "fuzz_support.h"
#include "slurm_model/srun_messages.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace mlsup;
  const auto reports = slurm::srun_task_reports(fuzz::text_of(data, size));
  if (const auto first = slurm::first_task_end(reports)) {
    const auto& node = first->report.node;
    const bool reported = std::any_of(reports.begin(), reports.end(), [&](const auto& r) { return r.node == node; });
    fuzz::check(reported, "the first end comes from a report");
    const auto& v = first->victims;
    fuzz::check(std::find(v.begin(), v.end(), node) == v.end(), "the first end's node is not its own victim");
  }
  for (const auto& r : reports) fuzz::check(r.node.find(' ') == std::string::npos, "a node name has no space");
  return 0;
}
