#pragma once
// Whether a campaign's job is wide enough to want spare nodes, and how many: pure, for `mlsup validate`.
#include <optional>
#include <string>

namespace mlsup::decide {

// Jobs of at least this many nodes are advised spares: one idle node costs them at most 1/16 of the job.
inline constexpr int kSparesFromNodes = 16;
// One spare for every this many training nodes (rounded up).
inline constexpr int kNodesPerSpare = 64;

// The spare nodes advised for a job of nodes training nodes.
int advised_spares(int nodes);

// Advice for a job of nodes with spare_nodes spares (chain: slurm.array, which has no spares), or none.
std::optional<std::string> spare_advice(int nodes, int spare_nodes, bool chain);

}  // namespace mlsup::decide
