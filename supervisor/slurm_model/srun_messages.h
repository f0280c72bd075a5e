#pragma once
// What srun says about its tasks in a job's output ("srun: error: n2: task 1: Exited with exit code
// 3"): the evidence, without the plugin, of which node's tasks failed and which were killed after.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mlsup::slurm {

struct TaskReport {
  std::string node;
  std::string tasks;        // "1" or "0-3", as srun wrote it
  int exit_code = 0;        // for "Exited with exit code N"
  std::string signal;       // srun's words for the signal ("Terminated", "Segmentation fault"), else ""
  int signo = 0;            // its number where srun's words are known, else 0
  bool failed = false;      // a failure of its own: a non-zero exit or a fatal signal other than a kill
};

// Every task report srun wrote into text, in order.
std::vector<TaskReport> srun_task_reports(std::string_view text);

// The first abnormal task end srun reported (a non-zero exit or any signal, a kill included), and
// the nodes whose tasks srun reported ending after it: srun ends the other tasks once one has
// failed, and they fail in turn when a peer is gone, so those are victims, not suspects.
struct FirstEnd {
  TaskReport report;
  std::vector<std::string> victims;  // other nodes with an abnormal end reported later, first-seen order
};
std::optional<FirstEnd> first_task_end(const std::vector<TaskReport>& reports);

}  // namespace mlsup::slurm
