#include "slurm/probe.h"

#include <future>

#include "edges/process.h"

namespace mlsup::slurm {

std::vector<std::string> unresponsive_nodes(JobId job, const std::vector<std::string>& nodes,
                                            std::chrono::seconds timeout) {
  std::vector<std::future<bool>> answers;
  for (const auto& node : nodes) {
    answers.push_back(std::async(std::launch::async, [job, node, timeout] {
      edges::ProcessRequest r;
      r.argv = {"srun", "--overlap", "--jobid=" + std::to_string(job), "-w", node, "-N1", "-n1", "--quiet", "true"};
      r.timeout = timeout;
      // Only silence counts: a step refused at once (the job is ending, a limit) says nothing of the node.
      return !edges::run_process(r).timed_out;
    }));
  }
  std::vector<std::string> silent;
  for (std::size_t i = 0; i < nodes.size(); ++i)
    if (!answers[i].get()) silent.push_back(nodes[i]);
  return silent;
}

}  // namespace mlsup::slurm
