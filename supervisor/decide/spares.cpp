#include "decide/spares.h"

namespace mlsup::decide {

int advised_spares(int nodes) { return nodes < kSparesFromNodes ? 0 : (nodes + kNodesPerSpare - 1) / kNodesPerSpare; }

std::optional<std::string> spare_advice(int nodes, int spare_nodes, bool chain) {
  const int advised = advised_spares(nodes);
  if (chain || advised == 0 || spare_nodes >= advised) return std::nullopt;
  const std::string n = std::to_string(nodes);
  const std::string have = spare_nodes == 0   ? "no spare node"
                           : spare_nodes == 1 ? "1 spare node"
                                              : std::to_string(spare_nodes) + " spare nodes";
  return "a job of " + n + " nodes with " + have + ": a node's fault ends the job, and its replacement waits in "
         "Slurm's queue for " + n + " nodes together; with slurm.spare_nodes: " + std::to_string(advised) +
         " the training restarts inside the same job on the nodes left and a spare, for " +
         std::to_string(advised) + " idle node" + (advised == 1 ? "" : "s") + " (one per " +
         std::to_string(kNodesPerSpare) + " training nodes; README, \"Wide jobs\")";
}

}  // namespace mlsup::decide
