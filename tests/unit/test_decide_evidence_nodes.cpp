// The node a finding names: an address or host name through the nodes' addresses, a rank through the
// rank layout, the node of the log; none where the rule blames none.
#include <doctest/doctest.h>

#include "decide/evidence_nodes.h"

using namespace mlsup::decide;

namespace {

const std::map<std::string, std::vector<std::string>> kAddresses{
    {"gpu-1", {"10.0.0.11", "10.1.0.11", "gpu-1.cluster.local", "gpu-1-ib0"}},
    {"gpu-2", {"10.0.0.12", "10.1.0.12", "gpu-2.cluster.local"}},
};

Finding blaming(Blame b, std::string captured, RuleAction a = RuleAction::Retry) {
  Finding f;
  f.blame = b;
  f.captured = std::move(captured);
  f.action = a;
  return f;
}

}  // namespace

TEST_CASE("evidence: an address or a host name maps to its node") {
  CHECK(node_of_address(kAddresses, "10.0.0.12") == "gpu-2");
  CHECK(node_of_address(kAddresses, "10.1.0.11") == "gpu-1");
  CHECK(node_of_address(kAddresses, "gpu-1-ib0") == "gpu-1");
  CHECK(node_of_address(kAddresses, "gpu-2") == "gpu-2");                // the node's own name
  CHECK(node_of_address(kAddresses, "gpu-2.cluster") == "gpu-2");        // a short form
  CHECK(node_of_address(kAddresses, "gpu-1.cluster.local") == "gpu-1");
  CHECK_FALSE(node_of_address(kAddresses, "10.0.0.1"));   // an address of no node
  CHECK_FALSE(node_of_address(kAddresses, "10.0.0"));     // no prefix of an address
  CHECK_FALSE(node_of_address(kAddresses, ""));
  const std::map<std::string, std::vector<std::string>> shared{{"a", {"10.0.0.5"}}, {"b", {"10.0.0.5"}}};
  CHECK_FALSE(node_of_address(shared, "10.0.0.5"));  // two nodes answer: neither is named
}

TEST_CASE("evidence: a rank maps to its node through the layout") {
  const auto layout = block_layout({"gpu-1", "gpu-2", "gpu-3"}, 4);
  REQUIRE(layout.size() == 12);
  CHECK(node_of_rank(layout, "0") == "gpu-1");
  CHECK(node_of_rank(layout, "3") == "gpu-1");
  CHECK(node_of_rank(layout, "4") == "gpu-2");
  CHECK(node_of_rank(layout, "11") == "gpu-3");
  CHECK_FALSE(node_of_rank(layout, "12"));
  CHECK_FALSE(node_of_rank(layout, "-1"));
  CHECK_FALSE(node_of_rank(layout, "3a"));
  CHECK_FALSE(node_of_rank(layout, ""));
  CHECK(node_of_rank({"gpu-2", "gpu-1"}, "1") == "gpu-1");  // a layout as the plugin's records tell it
}

TEST_CASE("evidence: the node a finding blames, by its blame") {
  Placement where{.addresses = kAddresses, .rank_nodes = block_layout({"gpu-1", "gpu-2"}, 8), .log_node = "gpu-2"};
  CHECK(blamed_node(blaming(Blame::NodeInLine, "10.0.0.11"), where) == "gpu-1");
  CHECK(blamed_node(blaming(Blame::RankInLine, "9"), where) == "gpu-2");
  CHECK(blamed_node(blaming(Blame::NodeOfLog, "0000:3b:00"), where) == "gpu-2");
  CHECK_FALSE(blamed_node(blaming(Blame::None, "10.0.0.11"), where));
  CHECK_FALSE(blamed_node(blaming(Blame::NodeInLine, "10.0.0.11", RuleAction::RetryNoBlame), where));
  where.log_node.reset();  // the job's combined output: no node's own
  CHECK_FALSE(blamed_node(blaming(Blame::NodeOfLog, ""), where));
}
