#include "observe/rank_layout.h"

#include <algorithm>
#include <filesystem>

#include "decide/hang_stacks.h"
#include "util/files.h"

namespace mlsup::observe {
namespace fs = std::filesystem;

namespace {

// A file's first line is all the layout needs, not the stacks a hang appended.
constexpr std::size_t kHeaderBytes = 512;
// A rank number beyond this is no layout's (a damaged file must not size the vector).
constexpr int kMostRanks = 1 << 20;

}  // namespace

std::vector<std::string> rank_files(const std::string& folder) {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    const auto name = it->path().filename().string();
    if (name.starts_with("rank-") && name.ends_with(".txt")) out.push_back(it->path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> rank_layout(const std::string& folder) {
  std::vector<std::string> nodes;
  for (const auto& f : rank_files(folder)) {
    auto head = util::read_head(f, kHeaderBytes).value_or("");
    head = head.substr(0, head.find('\n'));
    const auto r = decide::parse_rank_stacks(head);
    if (r.rank < 0 || r.rank >= kMostRanks || r.node.empty()) continue;
    if (nodes.size() <= static_cast<std::size_t>(r.rank)) nodes.resize(static_cast<std::size_t>(r.rank) + 1);
    nodes[static_cast<std::size_t>(r.rank)] = r.node;
  }
  return nodes;
}

}  // namespace mlsup::observe
