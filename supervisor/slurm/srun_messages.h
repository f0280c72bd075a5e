#pragma once
// What srun says about its tasks in a job's output ("srun: error: n2: task 1: Exited with exit code
// 3"): the evidence, without the plugin, of which node's tasks failed and which were killed after.
#include <string>
#include <string_view>
#include <vector>

namespace mlsup::slurm {

struct TaskReport {
  std::string node;
  std::string tasks;        // "1" or "0-3", as srun wrote it
  int exit_code = 0;        // for "Exited with exit code N"
  std::string signal;       // srun's words for the signal ("Terminated", "Segmentation fault"), else ""
  bool failed = false;      // a failure of its own: a non-zero exit or a fatal signal other than a kill
};

// Every task report srun wrote into text, in order.
std::vector<TaskReport> srun_task_reports(std::string_view text);

// The nodes whose tasks failed on their own (not killed afterwards), in first-seen order.
std::vector<std::string> failed_task_nodes(const std::vector<TaskReport>& reports);

}  // namespace mlsup::slurm
