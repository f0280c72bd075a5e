#pragma once
// Whether the cluster can hold a job's request at all: the nodes of its partition that Slurm could
// give it (not down, not drained or draining, not excluded) against the nodes it asks for. Slurm
// itself only says "Resources" for a request that waits for nodes which will never come back by
// themselves; this says so, and names the missing nodes and Slurm's reasons. Pure.
#include <string>
#include <vector>

#include "slurm_model/types.h"

namespace mlsup::decide {

struct Capacity {
  int asked = 0;                     // nodes the job asks for
  int usable = 0;                    // nodes of its partition Slurm could give it (busy ones included)
  std::vector<std::string> unusable; // the others, grouped by why: "e64 down (Not responding)", "e1, e59 drained (Kill task failed)"
};

// The capacity for a job of asked nodes in partition ("" = every node) with the nodes excluded.
Capacity capacity(int asked, const std::vector<slurm::Node>& nodes, const std::string& partition,
                  const std::vector<std::string>& excluded);

// True when the request cannot be met now: fewer usable nodes than asked.
inline bool short_of(const Capacity& c) { return c.usable < c.asked; }

// "asks 64 nodes, 63 usable: e64 down (Not responding); e1, e59 drained (Kill task failed)".
std::string shortfall_text(const Capacity& c);

}  // namespace mlsup::decide
