#pragma once
// What the hang's dump step (slurm/node_dump.h) printed, read per node: each task's lines (srun's
// "<task>: " labels) grouped, named by the node the task says it ran on, its processes summarised.
#include <string>
#include <vector>

namespace mlsup::observe {

struct DumpedProcess {
  int pid = 0;
  std::string rank, step, state, wchan, comm, by;  // by: py-spy | gdb | wchan
  int frames = 0;                                   // stack frames the tool gave
  std::string flight_recorder;                      // where PyTorch writes its NCCL dump, when asked for one
  bool operator==(const DumpedProcess&) const = default;
};

struct NodeDump {
  std::string node, tool;               // tool: the best one installed on the node
  std::string text;                     // the task's lines, labels taken off
  std::vector<DumpedProcess> processes;
  bool complete = false;                // the task printed its last line
};

// The nodes' dumps in the order their tasks first printed; lines without a task label, and tasks
// that never said their node, are left out.
std::vector<NodeDump> parse_node_dumps(const std::string& out);

// One process in words: "pid 12 rank 0 python3 T do_signal_stop (gdb: 14 frames)".
std::string describe(const DumpedProcess& p);

}  // namespace mlsup::observe
