#include "slurm/probe.h"

#include "util/strings.h"

namespace mlsup::slurm {
namespace {

// The nodes of nodes that are not in answered.
std::vector<std::string> unanswered(const std::vector<std::string>& nodes, const std::set<std::string>& answered) {
  std::vector<std::string> out;
  for (const auto& n : nodes)
    if (!answered.contains(n)) out.push_back(n);
  return out;
}

// One step over nodes: the nodes whose task printed its name before the deadline.
std::set<std::string> ask(JobId job, const std::vector<std::string>& nodes, std::chrono::seconds timeout) {
  edges::ProcessRequest r;
  r.argv = probe_argv(job, nodes);
  r.timeout = timeout;
  return probe_answers(edges::run_process(r));
}

}  // namespace

std::vector<std::string> one_task_per_node(JobId job, const std::vector<std::string>& nodes) {
  const std::string n = std::to_string(nodes.size());
  return {"srun", "--overlap", "--jobid=" + std::to_string(job), "-w", util::join(nodes, ","), "-N" + n, "-n" + n,
          "--ntasks-per-node=1", "--quiet"};
}

std::vector<std::string> probe_argv(JobId job, const std::vector<std::string>& nodes) {
  auto argv = one_task_per_node(job, nodes);
  argv.insert(argv.end(), {"--unbuffered", "printenv", "SLURMD_NODENAME"});
  return argv;
}

std::set<std::string> probe_answers(const edges::ProcessResult& result) {
  std::set<std::string> names;
  for (const auto& line : util::split(result.out, '\n'))
    if (const auto name = util::trim(line); !name.empty()) names.insert(std::string(name));
  return names;
}

std::vector<std::string> unresponsive_nodes(JobId job, const std::vector<std::string>& nodes,
                                            std::chrono::seconds timeout) {
  if (nodes.empty()) return {};
  const auto silent = unanswered(nodes, ask(job, nodes, timeout));
  if (silent.size() < 2) return silent;  // a relay's silence takes the relay with it: one node is itself
  return unanswered(silent, ask(job, silent, 2 * timeout));
}

}  // namespace mlsup::slurm
