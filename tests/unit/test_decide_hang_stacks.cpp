// Hang stacks: faulthandler's dumps as Python 3.11 writes them, read into where each rank stopped
// and which ranks the others wait on.
#include <doctest/doctest.h>

#include <string>

#include "decide/hang_stacks.h"

using namespace mlsup::decide;

namespace {

// A rank's file: the helper's header, an older dump, mlsup's "asked" line, then this hang's dump.
std::string rank_file(int rank, const std::string& node, const std::string& main_frames) {
  return "mlsup stacks: rank=" + std::to_string(rank) + " node=" + node + " pid=4242\n" +
         std::string(kStacksAsked) + " at 100 ---\n"
         "Current thread 0x00007f806667e040 (most recent call first):\n"
         "  File \"/old/dump.py\", line 1 in old\n"
         "  File \"/old/dump.py\", line 2 in <module>\n" +
         std::string(kStacksAsked) + " at 200 ---\n"
         "Thread 0x00007f80663c36c0 (most recent call first):\n"
         "  File \"/usr/lib/python3.11/threading.py\", line 324 in wait\n"
         "  File \"/usr/lib/python3.11/threading.py\", line 995 in _bootstrap\n"
         "\n"
         "Current thread 0x00007f806667e040 (most recent call first):\n" +
         main_frames;
}

const std::string kInAllReduce =
    "  File \"/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py\", line 2050 in all_reduce\n"
    "  File \"/work/python/mlsup_train/decide.py\", line 40 in reduce\n"
    "  File \"/work/examples/torch/ddp_train.py\", line 96 in main\n"
    "  File \"/work/examples/torch/ddp_train.py\", line 120 in <module>\n";
const std::string kInBackward =
    "  File \"/usr/lib/python3/dist-packages/torch/autograd/graph.py\", line 744 in _engine_run_backward\n"
    "  File \"/usr/lib/python3/dist-packages/torch/_tensor.py\", line 521 in backward\n"
    "  File \"/work/examples/torch/ddp_train.py\", line 88 in main\n"
    "  File \"/work/examples/torch/ddp_train.py\", line 120 in <module>\n";
const std::string kStalled =
    "  File \"/work/examples/torch/ddp_train.py\", line 61 in stall_if_asked\n"
    "  File \"/work/examples/torch/ddp_train.py\", line 91 in main\n"
    "  File \"/work/examples/torch/ddp_train.py\", line 120 in <module>\n";

std::string header_only(int rank, const std::string& node) {
  return "mlsup stacks: rank=" + std::to_string(rank) + " node=" + node + " pid=7\n" + std::string(kStacksAsked) + " at 200 ---\n";
}

}  // namespace

TEST_CASE("a rank's file: the header, and the main thread of the dump after the last 'asked' line") {
  const auto r = parse_rank_stacks(rank_file(3, "n4", kInAllReduce));
  CHECK(r.rank == 3);
  CHECK(r.node == "n4");
  CHECK(r.pid == "4242");
  CHECK(r.dumped);
  CHECK(r.where == "distributed/distributed_c10d.py:2050 in all_reduce");
  CHECK(r.waiting);
  REQUIRE(r.stack.size() == 4);
  CHECK(r.stack.back() == "torch/ddp_train.py:120 in <module>");

  const auto s = parse_rank_stacks(rank_file(1, "n2", kStalled));
  CHECK(s.where == "torch/ddp_train.py:61 in stall_if_asked");
  CHECK_FALSE(s.waiting);
  CHECK(parse_rank_stacks(rank_file(0, "n1", kInBackward)).waiting);
}

TEST_CASE("a rank's file without a dump after the last 'asked' line has not dumped; a foreign file names no rank") {
  const auto r = parse_rank_stacks(header_only(2, "n3"));
  CHECK(r.rank == 2);
  CHECK_FALSE(r.dumped);
  CHECK(parse_rank_stacks("Traceback (most recent call last):\n").rank == -1);
  CHECK(parse_rank_stacks("mlsup stacks: rank=x node=n1\n").rank == -1);
  CHECK(parse_rank_stacks("").rank == -1);
}

TEST_CASE("the main thread is the one whose outermost frame is a script's top level, not the one that took the signal") {
  const auto r = parse_rank_stacks(
      "mlsup stacks: rank=0 node=n1 pid=1\n"
      "Current thread 0x01 (most recent call first):\n"
      "  File \"/usr/lib/python3.11/threading.py\", line 324 in wait\n"
      "  File \"/usr/lib/python3.11/threading.py\", line 995 in _bootstrap\n"
      "\n"
      "Thread 0x02 (most recent call first):\n"
      "  File \"/w/train.py\", line 9 in step\n"
      "  File \"/w/train.py\", line 20 in <module>\n");
  CHECK(r.where == "w/train.py:9 in step");
}

TEST_CASE("judging the stacks: who the others wait on") {
  SUBCASE("a rank outside a collective while the others wait in one: two ranks are enough") {
    const auto v = judge_stacks({parse_rank_stacks(rank_file(0, "n1", kInBackward)), parse_rank_stacks(rank_file(1, "n2", kStalled))});
    CHECK(v.waited_on == std::vector<int>{1});
    CHECK(v.nodes == std::vector<std::string>{"n2"});
    CHECK(v.why == "rank 0 waits in a collective while rank 1 stopped outside one");
    REQUIRE(v.groups.size() == 2);
    CHECK(v.groups[0] == "rank 0: autograd/graph.py:744 in _engine_run_backward");
  }
  SUBCASE("ranks that left no stack while the others did (a frozen node) come first") {
    const auto v = judge_stacks({parse_rank_stacks(rank_file(0, "n1", kInAllReduce)), parse_rank_stacks(header_only(1, "n2")),
                                 parse_rank_stacks(rank_file(2, "n3", kStalled))});
    CHECK(v.waited_on == std::vector<int>{1});
    CHECK(v.nodes == std::vector<std::string>{"n2"});
    CHECK(v.groups.back() == "rank 2: torch/ddp_train.py:61 in stall_if_asked");
  }
  SUBCASE("every rank in the same collective (the network, not a rank): none singled out") {
    const auto v = judge_stacks({parse_rank_stacks(rank_file(0, "n1", kInAllReduce)), parse_rank_stacks(rank_file(1, "n2", kInAllReduce))});
    CHECK(v.waited_on.empty());
    CHECK(v.nodes.empty());
    CHECK(v.groups == std::vector<std::string>{"ranks 0-1: distributed/distributed_c10d.py:2050 in all_reduce"});
  }
  SUBCASE("a minority in another collective than a strict majority (a desync)") {
    std::vector<RankStacks> ranks;
    for (int r = 0; r < 5; ++r) ranks.push_back(parse_rank_stacks(rank_file(r, "n" + std::to_string(r / 2 + 1), r == 3 ? kInBackward : kInAllReduce)));
    const auto v = judge_stacks(ranks);
    CHECK(v.waited_on == std::vector<int>{3});
    CHECK(v.nodes == std::vector<std::string>{"n2"});
    CHECK(v.groups.front() == "ranks 0-2, 4: distributed/distributed_c10d.py:2050 in all_reduce");
  }
  SUBCASE("two places of equal weight, all waiting: none singled out") {
    const auto v = judge_stacks({parse_rank_stacks(rank_file(0, "n1", kInAllReduce)), parse_rank_stacks(rank_file(1, "n2", kInBackward))});
    CHECK(v.waited_on.empty());
  }
  SUBCASE("no rank dumped: none singled out, and the sentence says why") {
    const auto v = judge_stacks({parse_rank_stacks(header_only(0, "n1")), parse_rank_stacks(header_only(1, "n2"))});
    CHECK(v.waited_on.empty());
    CHECK(v.why.find("no rank left a stack") == 0);
  }
}
