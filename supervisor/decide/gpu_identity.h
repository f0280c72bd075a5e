#pragma once
// GPU identity: which GPUs an exclusion carries, and the node an excluded GPU turns up in later (a board
// moved to another chassis, a node renamed). Pure: the GPUs come from the plugin's node records.
#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "decide/ledger.h"
#include "slurm_model/types.h"

namespace mlsup::decide {

// The UUIDs of the node's GPUs that text names (by UUID, or by PCI address: in full, or as the driver's
// Xid line writes it, "PCI:0000:07:00"); every GPU's when it names none of them.
std::vector<std::string> carried_gpus(std::string_view text, const std::vector<slurm::Gpu>& gpus);

// Live exclusions of one node whose GPUs are all in another node now.
struct GpuMove {
  std::string from, to;
  std::vector<std::string> gpus;  // the UUIDs that moved
  double until = 0;               // the latest expiry among the entries that move
  std::string reason;             // the newest entry's reason
};

// At now, the exclusions that follow their GPUs: for each excluded node, its live entries' GPUs found all
// together in one other node of where (node -> its GPUs), and not already excluded there for them.
std::vector<GpuMove> moved_exclusions(const std::vector<Exclusion>& ledger, double now,
                                      const std::map<std::string, std::vector<slurm::Gpu>>& where);

// "GPU-5f1e2d3c (0000:07:00.0)" for each UUID, with its bus where gpus knows it, joined by ", ".
std::string gpu_words(const std::vector<std::string>& uuids, const std::vector<slurm::Gpu>& gpus = {});

}  // namespace mlsup::decide
