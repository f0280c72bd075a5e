// Fuzz target: `scontrol -o show job` / `show node` text, as the command-line backend reads it:
// records split into fields, then read as jobs and as nodes.
#include "fuzz_support.h"
#include "slurm_model/scontrol_text.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace mlsup;
  for (const auto& record : slurm::parse_records(fuzz::text_of(data, size))) {
    const slurm::Job job = slurm::job_from_record(record);
    const slurm::Node node = slurm::node_from_record(record);
    fuzz::check(!job.array_task_id || job.array_job_id != 0, "only an array task has a task id");
    fuzz::check(node.state.find_first_of("+*") == std::string::npos, "a node's state has no flags");
  }
  return 0;
}
