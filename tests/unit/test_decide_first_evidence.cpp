// The first-evidence rule's guard, as a table: a failure's first end against the training faults known
// and the rule's exclusions -> apply the rule, or the failure follows the training (and what to lift).
#include <doctest/doctest.h>

#include "decide/blame.h"
#include "decide/first_evidence.h"

using namespace mlsup::decide;

TEST_CASE("first evidence: exclude at once, or the failure follows the training and the rule's exclusions are lifted") {
  const std::vector<Exclusion> ledger{{"n2", "first", 100, 9000}, {"n4", "first", 100, 150}};  // n4's has expired
  const std::vector<RuleExclusion> made{{0, {"n2", 1, 300}}, {1, {"n4", 1, 300}}};
  const std::vector<TrainingFault> known{{0, 500, 20}};
  struct Row {
    const char* what;
    FirstEnd end;
    long long interval;
    bool apply, follows;
    std::vector<std::string> lift;
  };
  const Row rows[] = {
      {"the first failure of its kind: exclude its node", {"n3", 0, 300}, 20, true, false, {}},
      {"rank 1 again at the same step on another node: follows the training", {"n3", 1, 300}, 20, false, true, {"n2"}},
      {"rank 1 again within a checkpoint interval", {"n3", 1, 315}, 20, false, true, {"n2"}},
      {"rank 1 again, but further than a checkpoint interval: a node again", {"n3", 1, 330}, 20, true, false, {}},
      {"rank 1 again, exactly the step, no interval known", {"n3", 1, 300}, 0, false, true, {"n2"}},
      {"rank 1 at a step apart, no interval known: a node", {"n3", 1, 301}, 0, true, false, {}},
      {"another rank at the same step: a node", {"n3", 2, 300}, 20, true, false, {}},
      {"the same node again: the rule's exclusion did not hold it, it is named again", {"n2", 1, 300}, 20, true, false, {}},
      {"a training fault known: no node is named", {"n1", 0, 510}, 20, false, true, {}},
      {"near a known fault's step but another rank: a node", {"n1", 3, 510}, 20, true, false, {}},
  };
  for (const auto& r : rows) {
    CAPTURE(r.what);
    const auto v = weigh_first_end(r.end, known, made, ledger, 200, r.interval);
    CHECK(v.apply == r.apply);
    CHECK(v.follows_training == r.follows);
    CHECK(v.lift == r.lift);
    CHECK(v.found.has_value() == !r.lift.empty());
    if (v.found) CHECK(matches(*v.found, r.end));
  }
}

TEST_CASE("first evidence: the checkpoint interval is the gap between the two newest steps") {
  CHECK(step_interval({}) == 0);
  CHECK(step_interval({40}) == 0);
  CHECK(step_interval({10, 40, 20, 30, 30}) == 10);
  CHECK(step_interval({100, 50}) == 50);
}

namespace {

std::vector<std::string> names(const std::vector<Blamed>& b) {
  std::vector<std::string> out;
  for (const auto& x : b) out.push_back(x.node);
  return out;
}

}  // namespace

TEST_CASE("first evidence in blame: the node srun or the plugin names first, weak or not, in a job of several nodes") {
  NodeEvidence srun_named{"n2"};
  srun_named.task_failed = true;
  srun_named.first_weak = true;
  NodeEvidence plugin_weak{"n3"};
  plugin_weak.failed_first = true;
  plugin_weak.first_weak = true;
  BlameInput in{.cls = EndClass::Failed, .job_nodes = {{"n1"}, srun_named}, .now = 200, .first_evidence = true};
  auto b = blame(in);
  REQUIRE(b.size() == 1);
  CHECK(b[0].node == "n2");
  CHECK(b[0].first_evidence);
  CHECK(b[0].reason.find("srun's report") != std::string::npos);
  in.job_nodes = {{"n1"}, plugin_weak};
  b = blame(in);
  REQUIRE(b.size() == 1);
  CHECK(b[0].first_evidence);
  CHECK(b[0].reason.find("the plugin's records") != std::string::npos);
  in.job_nodes = {srun_named};  // a one-node job: naming its node sets nothing apart
  CHECK(blame(in).empty());
  in.job_nodes = {{"n1"}, srun_named};
  in.cls = EndClass::NodeFail;  // the rule is for failures of the training
  CHECK(blame(in).empty());
  in.cls = EndClass::Failed;
  in.first_evidence = false;  // without the rule: the suspect of one failure is not excluded (the old weighing)
  CHECK(blame(in).empty());
}

TEST_CASE("a failure that follows the training: its weak first end names no node, now or in the repeated-failure rule") {
  NodeEvidence srun_named{"n2"};
  srun_named.task_failed = true;
  srun_named.first_weak = true;
  BlameInput in{.cls = EndClass::Failed, .job_nodes = {{"n1"}, srun_named}, .past = {{100, {"n2"}}}, .now = 200,
                .first_evidence = false, .follows_training = true};
  CHECK(blame(in).empty());  // n2 named twice, yet the failure follows the training
  NodeEvidence silent{"n1"};
  silent.not_responding = true;
  in.job_nodes = {silent, srun_named};  // direct evidence still counts
  CHECK(names(blame(in)) == std::vector<std::string>{"n1"});
  NodeEvidence segv{"n2"};
  segv.failed_first = true;  // a machine fault's signal in the plugin's records: strong, not weak
  in.job_nodes = {{"n1"}, segv};
  CHECK(names(blame(in)) == std::vector<std::string>{"n2"});
}
