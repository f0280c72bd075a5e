#pragma once
// Hang stacks (pure): each rank's Python stacks, dumped by faulthandler when mlsup asked at a hang,
// read into where every rank stopped and which ranks the others wait on.
#include <string>
#include <string_view>
#include <vector>

namespace mlsup::decide {

// The line mlsup appends to a rank's file before it asks for the stacks; what follows is this hang's.
inline constexpr std::string_view kStacksAsked = "--- mlsup: stacks asked";

// One rank's file: the helper's first line names rank, node and pid; then the dumps.
struct RankStacks {
  int rank = -1;
  std::string node, pid;
  bool dumped = false;             // a dump follows the last "stacks asked" line
  std::string where;               // the main thread's innermost frame: "file:line in function"
  bool waiting = false;            // ... is inside a collective or a wait (torch.distributed, autograd, a barrier)
  std::vector<std::string> stack;  // the main thread's frames, innermost first
};

// Reads a rank's file ("mlsup stacks: rank=R node=N pid=P" first); rank -1 when the first line is not that.
RankStacks parse_rank_stacks(std::string_view text);

// What the ranks' stacks say together.
struct StacksVerdict {
  std::vector<std::string> groups;  // "ranks 0, 2: where" per place, the most ranks first; "rank 1: no stack"
  std::vector<int> waited_on;       // the ranks the others wait on (none when the stacks do not single any out)
  std::vector<std::string> nodes;   // their nodes
  std::string why;                  // one sentence: how they were singled out, or why none was
};

// The ranks singled out: with some dumps, those without one (gone, or stuck where no signal
// reaches); else those outside a collective while the others wait in one; else a minority stopped
// elsewhere than a strict majority that shares one place.
StacksVerdict judge_stacks(const std::vector<RankStacks>& ranks);

}  // namespace mlsup::decide
