#pragma once
// Where each rank of an attempt ran, as the Python helper's files in the attempt's hang folder say
// (rank-<R>.txt, made at startup; first line "mlsup stacks: rank=R node=N pid=P"): exact whatever
// the launcher (torchrun's rendezvous places ranks as it likes), for the rules that name a rank.
#include <string>
#include <vector>

namespace mlsup::observe {

// The ranks' files in folder (rank-<R>.txt), in name order.
std::vector<std::string> rank_files(const std::string& folder);

// rank -> node from the files' first lines ("" for a rank without a file); [] when there are none.
std::vector<std::string> rank_layout(const std::string& folder);

}  // namespace mlsup::observe
