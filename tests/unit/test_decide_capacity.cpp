// Whether a partition can give a job what it asks: usable nodes against the nodes asked, and the
// missing ones named with Slurm's reasons.
#include <doctest/doctest.h>

#include "decide/capacity.h"

using namespace mlsup;
using slurm::Node;

namespace {

// 66 nodes e1..e66 of partition "batch", all usable.
std::vector<Node> cluster() {
  std::vector<Node> out;
  for (int i = 1; i <= 66; ++i) out.push_back(Node{"e" + std::to_string(i), "IDLE", false, false, "", {"batch"}});
  return out;
}

}  // namespace

TEST_CASE("capacity: a 64-node job on 66 nodes with a power loss and two drains is short by one, each named") {
  auto nodes = cluster();
  nodes[63] = Node{"e64", "DOWN", false, true, "Not responding", {"batch"}};
  nodes[0] = Node{"e1", "ALLOCATED", true, false, "Kill task failed", {"batch"}};
  nodes[58] = Node{"e59", "IDLE", true, false, "Kill task failed", {"batch"}};
  nodes[1].state = "ALLOCATED";  // busy with another job: usable, it frees
  const auto c = decide::capacity(64, nodes, "batch", {});
  CHECK(c.usable == 63);
  CHECK(decide::short_of(c));
  CHECK(decide::shortfall_text(c) == "asks 64 nodes, 63 usable: e1, e59 drained (Kill task failed); e64 down (Not responding)");
}

TEST_CASE("capacity: excluded nodes and other partitions' nodes are not usable; enough is not short") {
  auto nodes = cluster();
  nodes.push_back(Node{"g1", "IDLE", false, false, "", {"gpu"}});
  auto c = decide::capacity(64, nodes, "batch", {"e3", "e4"});
  CHECK(c.usable == 64);
  CHECK_FALSE(decide::short_of(c));
  c = decide::capacity(65, nodes, "batch", {"e3", "e4"});
  CHECK(decide::shortfall_text(c) == "asks 65 nodes, 64 usable: e3, e4 excluded");
  CHECK(decide::capacity(67, nodes, "", {}).usable == 67);  // no partition known: every node
}

TEST_CASE("capacity: a long list of the same reason is cut, with how many more") {
  auto nodes = cluster();
  for (int i = 0; i < 10; ++i) nodes[i] = Node{nodes[i].name, "DOWN", false, true, "Not responding", {"batch"}};
  const auto c = decide::capacity(64, nodes, "batch", {});
  CHECK(decide::shortfall_text(c) == "asks 64 nodes, 56 usable: e1, e2, e3, e4, e5, e6 and 4 more down (Not responding)");
}
