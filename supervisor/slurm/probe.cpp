#include "slurm/probe.h"

#include <future>

#include "edges/process.h"

namespace mlsup::slurm {

bool probe_says_silent(const edges::ProcessResult& result) {
  return result.timed_out || result.err.find("Communication connection failure") != std::string::npos;
}

std::vector<std::string> unresponsive_nodes(JobId job, const std::vector<std::string>& nodes,
                                            std::chrono::seconds timeout) {
  std::vector<std::future<bool>> answers;
  for (const auto& node : nodes) {
    answers.push_back(std::async(std::launch::async, [job, node, timeout] {
      edges::ProcessRequest r;
      r.argv = {"srun", "--overlap", "--jobid=" + std::to_string(job), "-w", node, "-N1", "-n1", "--quiet", "true"};
      r.timeout = timeout;
      return !probe_says_silent(edges::run_process(r));
    }));
  }
  std::vector<std::string> silent;
  for (std::size_t i = 0; i < nodes.size(); ++i)
    if (!answers[i].get()) silent.push_back(nodes[i]);
  return silent;
}

}  // namespace mlsup::slurm
