#pragma once
// Which Slurm node a finding names: an address or a host name in its line, mapped through the nodes'
// addresses; a rank, mapped through the attempt's rank layout; or the node whose own log held the line.
// Pure: plain values in (the plugin's records fill them), a node name out.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "decide/evidence_rules.h"

namespace mlsup::decide {

// Where an attempt ran: what each node is called and reached by, and where each rank ran.
struct Placement {
  std::map<std::string, std::vector<std::string>> addresses;  // node -> its IP addresses and host names
  std::vector<std::string> rank_nodes;                        // rank -> node
  std::optional<std::string> log_node;                        // the node whose own log was read; nullopt: the job's output
};

// Ranks laid out in blocks, as srun's block distribution places them: ranks_per_node to each node in turn.
std::vector<std::string> block_layout(const std::vector<std::string>& nodes, int ranks_per_node);

// The node known by address: its own name, one of its addresses or host names, either's short form
// (before the first '.') when it is not an IPv4 address; nullopt when no node or several are.
std::optional<std::string> node_of_address(const std::map<std::string, std::vector<std::string>>& addresses,
                                           std::string_view address);

// The node where rank ran; nullopt for a rank outside the layout or a text that is no rank.
std::optional<std::string> node_of_rank(const std::vector<std::string>& rank_nodes, std::string_view rank);

// The node a finding blames; nullopt when it blames none or names none that is known.
std::optional<std::string> blamed_node(const Finding& f, const Placement& where);

}  // namespace mlsup::decide
