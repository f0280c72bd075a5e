#include <doctest/doctest.h>

#include "decide/evidence_ending.h"
#include "decide/exit_codes.h"

using namespace mlsup;
using namespace mlsup::decide;

namespace {

Finding finding(std::string cls, Blame blame, RuleAction action, std::string captured = "") {
  return {"r", false, std::move(cls), blame, action, 3, "the line", std::move(captured)};
}

}  // namespace

TEST_CASE("evidence ending: only the training's failures are read for evidence") {
  CHECK(explained_by_output(EndClass::Failed));
  CHECK(explained_by_output(EndClass::OutOfMemory));
  for (auto c : {EndClass::Completed, EndClass::Timeout, EndClass::Preempted, EndClass::CancelledByPerson,
                 EndClass::CancelRequested, EndClass::Hang, EndClass::KillSwitch, EndClass::NodeFail})
    CHECK_FALSE(explained_by_output(c));
}

TEST_CASE("evidence ending: the winning rule over the output's lines, for a failure only") {
  const std::string out = "step 3\nRuntimeError: CUDA out of memory. Tried to allocate 1 GiB\n";
  const auto f = explain_ending(EndClass::Failed, shipped_rules(), out);
  REQUIRE(f);
  CHECK(f->rule == "cuda_oom");
  CHECK(f->line_number == 2);
  CHECK(stops(*f));
  CHECK_FALSE(explain_ending(EndClass::Timeout, shipped_rules(), out));
  CHECK_FALSE(explain_ending(EndClass::Failed, shipped_rules(), "step 3\nstep 4\n"));
  CHECK_FALSE(explain_ending(EndClass::Failed, shipped_rules(), ""));
}

TEST_CASE("evidence ending: a stop's decision is the do-not-retry code, naming the rule and quoting the line") {
  const auto d = stop_decision(finding("disk_full", Blame::None, RuleAction::StopAlert));
  CHECK(d.action == Action::Stop);
  CHECK(d.exit_code == kNoRetry);
  CHECK(d.reason.find("evidence rule r, line 3 of its tail: \"the line\"") != std::string::npos);
}

TEST_CASE("evidence ending: whom a finding holds responsible") {
  const std::vector<std::string> two{"gpu1", "gpu2"};
  SUBCASE("a software cause or retry_no_blame: no node") {
    CHECK(finding_nodes(finding("software", Blame::None, RuleAction::Retry), two).blame == FindingBlame::NoNode);
    CHECK(finding_nodes(finding("host_oom", Blame::None, RuleAction::RetryNoBlame), two).blame == FindingBlame::NoNode);
    CHECK(clears_nodes(finding("software", Blame::NodeInLine, RuleAction::Retry, "gpu2")));
  }
  SUBCASE("a host in the line: the node of that name or short name, and only it") {
    const auto n = finding_nodes(finding("network", Blame::NodeInLine, RuleAction::Retry, "gpu2.cluster.local"), two);
    CHECK(n.blame == FindingBlame::OneNode);
    CHECK(n.node == "gpu2");
  }
  SUBCASE("an address no node is known by: as without the finding") {
    CHECK(finding_nodes(finding("network", Blame::NodeInLine, RuleAction::Retry, "10.0.0.7"), two).blame ==
          FindingBlame::AsBefore);
    CHECK(finding_nodes(finding("network", Blame::NodeInLine, RuleAction::Retry, "10.0.0.7"), two,
                        {{"gpu1", {"10.0.0.6"}}, {"gpu2", {"10.0.0.8"}}})
              .blame == FindingBlame::AsBefore);
  }
  SUBCASE("an address: the node whose NodeAddr or NodeHostname it is, and only it") {
    const std::map<std::string, std::vector<std::string>> names{{"gpu1", {"127.0.0.11", "localhost"}},
                                                                 {"gpu2", {"127.0.0.12", "localhost"}}};
    const auto n = finding_nodes(finding("network", Blame::NodeInLine, RuleAction::Retry, "127.0.0.11"), two, names);
    CHECK(n.blame == FindingBlame::OneNode);
    CHECK(n.node == "gpu1");
    // A name both nodes have (one host name for every node of the local cluster) names neither.
    CHECK(finding_nodes(finding("network", Blame::NodeInLine, RuleAction::Retry, "localhost"), two, names).blame ==
          FindingBlame::AsBefore);
  }
  SUBCASE("a node's own log: the job's only node; of several, unknown which") {
    const auto one = finding_nodes(finding("gpu_hardware", Blame::NodeOfLog, RuleAction::Retry), {"gpu1"});
    CHECK(one.blame == FindingBlame::OneNode);
    CHECK(one.node == "gpu1");
    CHECK(finding_nodes(finding("gpu_hardware", Blame::NodeOfLog, RuleAction::Retry), two).blame == FindingBlame::AsBefore);
  }
  SUBCASE("a stop that names no node it can place blames none") {
    CHECK(finding_nodes(finding("cuda_oom", Blame::None, RuleAction::StopAlert), two).blame == FindingBlame::NoNode);
  }
  SUBCASE("a retry that names no one: as without the finding") {
    CHECK(finding_nodes(finding("nccl_timeout", Blame::None, RuleAction::Retry), two).blame == FindingBlame::AsBefore);
  }
}

TEST_CASE("evidence at a hang: a line that names a node blames it alone, in place of the stacks and the heartbeats") {
  // n3's rank died of "connect [n2's address]": the stacks say the others wait on n3, its heartbeat stopped first.
  std::vector<NodeEvidence> e = hang_evidence({"n1", "n2", "n3"}, {{"n3", 12}}, {}, {"n3"}, "rank 2 left no stack");
  const auto f = finding("network", Blame::NodeInLine, RuleAction::Retry, "10.0.0.2");
  const auto decided = weigh_hang_output(e, f, {FindingBlame::OneNode, "n2"});
  CHECK(decided == "n2 blamed alone");
  const auto b = blame({EndClass::Hang, e});
  REQUIRE(b.size() == 1);
  CHECK(b[0].node == "n2");
  CHECK(b[0].reason.find("evidence rule r") != std::string::npos);
}

TEST_CASE("evidence at a hang: a software cause blames no node the stacks or heartbeats named; a probe's silence stands") {
  std::vector<NodeEvidence> e = hang_evidence({"n1", "n2", "n3"}, {{"n3", 12}}, {"n1"}, {"n3"}, "rank 2 left no stack");
  const auto decided = weigh_hang_output(e, finding("software", Blame::None, RuleAction::RetryNoBlame), {FindingBlame::NoNode, ""});
  CHECK(decided.find("no node is held responsible") == 0);
  const auto b = blame({EndClass::Hang, e});
  REQUIRE(b.size() == 1);
  CHECK(b[0].node == "n1");  // the probe got no answer from it
}

TEST_CASE("evidence at a hang: a finding that places no node changes nothing") {
  std::vector<NodeEvidence> e = hang_evidence({"n1", "n2"}, {}, {}, {"n2"}, "rank 1 left no stack");
  CHECK(weigh_hang_output(e, finding("network", Blame::NodeInLine, RuleAction::Retry, "10.9.9.9"), {}).empty());
  const auto b = blame({EndClass::Hang, e});
  REQUIRE(b.size() == 1);
  CHECK(b[0].node == "n2");
}
