#include <doctest/doctest.h>

#include <csignal>

#include "decide/blame.h"
#include "decide/ledger.h"

using namespace mlsup::decide;

namespace {

std::vector<std::string> names(const std::vector<Blamed>& b) {
  std::vector<std::string> out;
  for (const auto& x : b) out.push_back(x.node);
  return out;
}

}  // namespace

TEST_CASE("a node that does not answer is blamed; one Slurm already keeps jobs off is not") {
  BlameInput in{.cls = EndClass::NodeFail,
                .job_nodes = {{"n1"}, {"n2", false, true}, {"n3", true, true}}};
  CHECK(names(blame(in)) == std::vector<std::string>{"n2"});
  in.cls = EndClass::Timeout;
  CHECK(blame(in).empty());
  in.cls = EndClass::CancelledByPerson;
  CHECK(blame(in).empty());
}

TEST_CASE("the node common to repeated failures, never every node of the job") {
  BlameInput in{.cls = EndClass::Failed, .job_nodes = {{"n2"}, {"n3"}}, .past = {{100, {"n1", "n3"}}}, .now = 200};
  CHECK(names(blame(in)) == std::vector<std::string>{"n3"});
  in.past = {{100, {"n2", "n3"}}};  // the same two nodes again: nothing sets one apart
  CHECK(blame(in).empty());
  in.past = {{100, {"n1", "n3"}}};
  in.now = 100 + 6 * 3600;  // the earlier failure left the window
  CHECK(blame(in).empty());
  in.now = 200;
  in.repeat_threshold = 3;
  CHECK(blame(in).empty());
  in.past.push_back({150, {"n3", "n4"}});
  CHECK(names(blame(in)) == std::vector<std::string>{"n3"});
}

TEST_CASE("without evidence, repeated failures of a wide job blame none of its nodes, spares or not") {
  BlameInput in{.cls = EndClass::Hang, .now = 200};
  std::vector<std::string> run;
  for (int i = 1; i <= 64; ++i) {
    run.push_back("n" + std::to_string(i));
    in.job_nodes.push_back({run.back()});
  }
  in.job_nodes.push_back({"spare"});  // the job's spare, in no earlier failure
  in.past = {{100, run}};
  CHECK(blame(in).empty());
  in.job_nodes.pop_back();
  in.past[0].nodes[63] = "n65";  // 63 nodes in common: still no single node's fault
  CHECK(blame(in).empty());
  in.past[0].nodes = {"n1", "n65"};  // one node in common with an earlier failure elsewhere
  CHECK(names(blame(in)) == std::vector<std::string>{"n1"});
}

TEST_CASE("direct evidence wins over the repeated-failure rule") {
  BlameInput in{.cls = EndClass::Failed, .job_nodes = {{"n2", false, true}, {"n3"}}, .past = {{100, {"n3"}}}, .now = 200};
  CHECK(names(blame(in)) == std::vector<std::string>{"n2"});
}

TEST_CASE("the ledger: unexpired entries, newest first, within the cap") {
  const std::vector<Exclusion> ledger = {
      {"n1", "old", 100, 1000}, {"n2", "expired", 200, 300}, {"n3", "new", 400, 2000}, {"n1", "again", 500, 2000}};
  CHECK(excluded_nodes(ledger, 350, -1) == std::vector<std::string>{"n1", "n3"});
  CHECK(excluded_nodes(ledger, 350, 1) == std::vector<std::string>{"n1"});
  CHECK(excluded_nodes(ledger, 350, 0).empty());
  CHECK(excluded_nodes(ledger, 5000, -1).empty());
  CHECK(exclusion_cap(0, 4, 2) == 2);
  CHECK(exclusion_cap(0, 2, 4) == 0);
  CHECK(exclusion_cap(3, 4, 2) == 3);
}

TEST_CASE("srun naming a node's failing task makes it the only suspect, counted over repeated failures") {
  NodeEvidence bad{"n1"};
  bad.task_failed = true;
  BlameInput in{.cls = EndClass::Failed, .job_nodes = {bad, {"n2"}}, .now = 200};
  CHECK(suspects(in.job_nodes) == std::vector<std::string>{"n1"});
  CHECK(blame(in).empty());  // one failure is not yet a pattern
  in.past = {{100, {"n1"}}};  // the same nodes again, the same node named
  CHECK(names(blame(in)) == std::vector<std::string>{"n1"});
  in.past = {{100, {"n1", "n2"}}};  // an earlier failure without evidence counts every node
  CHECK(names(blame(in)) == std::vector<std::string>{"n1"});
  CHECK(suspects({{"n1"}, {"n2"}}) == std::vector<std::string>{"n1", "n2"});
}

TEST_CASE("a one-node job: its node is blamed on repeated named failures, never on circumstance alone") {
  NodeEvidence only{"n1"};
  BlameInput in{.cls = EndClass::Failed, .job_nodes = {only}, .past = {{100, {"n1"}}}, .now = 200};
  CHECK(blame(in).empty());
  in.job_nodes[0].task_failed = true;
  CHECK(names(blame(in)) == std::vector<std::string>{"n1"});
  in.job_nodes[0].slurm_down = true;  // Slurm keeps jobs off it already
  CHECK(blame(in).empty());
}

TEST_CASE("the plugin's evidence is direct: a failed health check, and the first failing node of a multi-node job") {
  NodeEvidence first{"n2"};
  first.failed_first = true;
  BlameInput in{.cls = EndClass::Failed, .job_nodes = {{"n1"}, first, {"n3"}}, .now = 200};
  CHECK(names(blame(in)) == std::vector<std::string>{"n2"});
  in.cls = EndClass::Timeout;
  CHECK(blame(in).empty());
  in.cls = EndClass::Failed;
  in.job_nodes = {first};  // alone, the first failure of a one-node job tells nothing about its node
  CHECK(blame(in).empty());
  NodeEvidence sick{"n4"};
  sick.health_failed = true;
  in.job_nodes = {{"n1"}, sick};
  CHECK(names(blame(in)) == std::vector<std::string>{"n4"});
}

TEST_CASE("a weak first end (an exit code, an abort, a kill) names the one suspect; it is excluded when named again") {
  CHECK(weak_end(1, 0));
  CHECK(weak_end(0, SIGKILL));
  CHECK(weak_end(0, SIGABRT));
  CHECK_FALSE(weak_end(0, SIGSEGV));
  CHECK_FALSE(weak_end(0, SIGBUS));
  CHECK_FALSE(weak_end(0, SIGILL));
  NodeEvidence first{"n2"};
  first.failed_first = true;
  first.first_weak = true;
  BlameInput in{.cls = EndClass::Failed, .job_nodes = {{"n1"}, first, {"n3"}}, .now = 200};
  CHECK(blame(in).empty());
  CHECK(suspects(in.job_nodes) == std::vector<std::string>{"n2"});
  in.past = {{100, {"n2"}}};
  const auto b = blame(in);
  REQUIRE(b.size() == 1);
  CHECK(b[0].node == "n2");
  CHECK(b[0].reason.find("suspect in 2 failed attempts") != std::string::npos);
  in.past = {{100, {"n1"}}};  // n1 was named before, but this time it is a victim: not counted
  CHECK(blame(in).empty());
}

TEST_CASE("a hang: the node whose heartbeat stopped first is blamed, in a job of several nodes only") {
  NodeEvidence stale{"n2"};
  stale.heartbeat_stale_first = true;
  stale.heartbeat_lead = 7.6;
  BlameInput in{.cls = EndClass::Hang, .job_nodes = {{"n1"}, stale}, .now = 200};
  const auto b = blame(in);
  REQUIRE(names(b) == std::vector<std::string>{"n2"});
  CHECK(b[0].reason.find("its heartbeat stopped 7 s before the other nodes'") == 0);
  in.job_nodes = {{"n1", false, true}, stale};  // the probe's verdict stands beside it
  CHECK(names(blame(in)) == std::vector<std::string>{"n1", "n2"});
  stale.not_responding = true;  // both: one entry, both reasons
  in.job_nodes = {{"n1"}, stale};
  REQUIRE(blame(in).size() == 1);
  CHECK(blame(in)[0].reason == "did not respond when the attempt ended as hang; its heartbeat stopped 7 s before the other nodes'");
  stale.not_responding = false;
  in.job_nodes = {stale};
  CHECK(blame(in).empty());
  in.job_nodes = {{"n1"}, stale};
  in.cls = EndClass::Timeout;
  CHECK(blame(in).empty());
}

TEST_CASE("hang evidence: each node of the job with what the heartbeats and the probe said of it") {
  const auto e = hang_evidence({"n1", "n2", "n3"}, {{"n2", 7.5}}, {"n3"});
  REQUIRE(e.size() == 3);
  CHECK(e[0].name == "n1");
  CHECK_FALSE(e[0].heartbeat_stale_first);
  CHECK_FALSE(e[0].not_responding);
  CHECK(e[1].heartbeat_stale_first);
  CHECK(e[1].heartbeat_lead == 7.5);
  CHECK_FALSE(e[1].not_responding);
  CHECK(e[2].not_responding);
  CHECK_FALSE(e[2].heartbeat_stale_first);
  CHECK(hang_evidence({}, {{"n9", 1}}, {"n9"}).empty());  // nothing about nodes the job does not have
}
