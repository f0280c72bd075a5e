// The set's gate: which runs may start, by their dependencies, priorities and the set's limits.
#include <doctest/doctest.h>

#include "decide/set_gate.h"
#include "supervise/set_runs.h"
#include "support.h"

using namespace mlsup::engine;

namespace {

// Each run's gate as "name:gate".
std::vector<std::string> gates(const std::vector<GateRun>& runs, int max_running = 0, int max_nodes = 0) {
  const auto d = decide_starts(runs, max_running, max_nodes);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < runs.size(); ++i) out.push_back(runs[i].name + ":" + gate_name(d[i].gate));
  return out;
}

GateRun run(std::string name, RunPhase phase = RunPhase::NotStarted, std::vector<std::string> after = {}, int priority = 0,
            int nodes = 1) {
  return {std::move(name), std::move(after), priority, nodes, phase, 0};
}

}  // namespace

TEST_CASE("gate: a run waits for the runs it comes after until they completed") {
  CHECK(gates({run("a"), run("b", RunPhase::NotStarted, {"a"})}) == std::vector<std::string>{"a:may-start", "b:waiting"});
  CHECK(gates({run("a", RunPhase::Active), run("b", RunPhase::NotStarted, {"a"})}) ==
        std::vector<std::string>{"a:started", "b:waiting"});
  CHECK(gates({run("a", RunPhase::Completed), run("b", RunPhase::NotStarted, {"a"}), run("c", RunPhase::NotStarted, {"a"})}) ==
        std::vector<std::string>{"a:started", "b:may-start", "c:may-start"});
  const auto d = decide_starts({run("a", RunPhase::Active), run("b", RunPhase::NotStarted, {"a"})}, 0, 0);
  CHECK(d[1].reason == "after a (running)");
}

TEST_CASE("gate: a dependency that ended without completing blocks its dependents, and theirs, with its exit code") {
  auto a = run("a", RunPhase::Ended);
  a.exit_code = 7;
  const auto d = decide_starts({a, run("b", RunPhase::NotStarted, {"a"}), run("c", RunPhase::NotStarted, {"b"})}, 0, 0);
  CHECK(d[1].gate == Gate::Blocked);
  CHECK(d[1].exit_code == 7);
  CHECK(d[1].reason.find("after a, which ended with exit 7 (not completed)") == 0);
  CHECK(d[2].gate == Gate::Blocked);
  CHECK(d[2].exit_code == 7);
  CHECK(d[2].reason.find("after b, which is blocked: after a") == 0);
}

TEST_CASE("gate: max_running lets the highest priorities start first; ties in the order given") {
  CHECK(gates({run("a", RunPhase::NotStarted, {}, 1), run("b", RunPhase::NotStarted, {}, 5), run("c", RunPhase::NotStarted, {}, 1)}, 2) ==
        std::vector<std::string>{"a:may-start", "b:may-start", "c:waiting"});
  CHECK(gates({run("x", RunPhase::Active), run("a"), run("b")}, 2) == std::vector<std::string>{"x:started", "a:may-start", "b:waiting"});
  const auto d = decide_starts({run("x", RunPhase::Active), run("a")}, 1, 0);
  CHECK(d[1].reason == "max_running 1 reached (1 running)");
  // Completed and ended runs hold no room.
  CHECK(gates({run("x", RunPhase::Completed), run("a")}, 1) == std::vector<std::string>{"x:started", "a:may-start"});
}

TEST_CASE("gate: max_nodes counts the running runs' nodes; a run that does not fit holds back the lower priorities") {
  CHECK(gates({run("big", RunPhase::NotStarted, {}, 9, 4), run("small", RunPhase::NotStarted, {}, 1, 1)}, 0, 4) ==
        std::vector<std::string>{"big:may-start", "small:waiting"});
  CHECK(gates({run("r", RunPhase::Active, {}, 0, 2), run("big", RunPhase::NotStarted, {}, 9, 4), run("small", RunPhase::NotStarted, {}, 1, 1)}, 0, 4) ==
        std::vector<std::string>{"r:started", "big:waiting", "small:waiting"});
}

TEST_CASE("set: max_nodes counts the nodes each run's job asks for, an #SBATCH --nodes of a plain script too") {
  mlsup::test::TempDir dir;
  dir.write("plain.sbatch", "#!/bin/bash\n#SBATCH --nodes=3\nsrun true\n");
  dir.write("job.sbatch", "#!/bin/bash\nsrun true\n");
  dir.write("night.yaml", "max_nodes: 4\nruns:\n  - {name: a, config: a.yaml}\n  - {name: b, config: a.yaml}\n"
                          "  - {name: c, config: c.yaml}\n");
  dir.write("a.yaml", "name: a\ntemplate: plain.sbatch\n");
  dir.write("c.yaml", "name: c\ntemplate: job.sbatch\nslurm: {nodes: 2}\n");
  const auto set = mlsup::config::load_set_file(dir.path() + "/night.yaml");
  REQUIRE(set);
  CHECK(run_nodes(set->runs[0].config) == 3);
  CHECK(run_nodes(set->runs[2].config) == 2);
  const auto g = set_gates(*set);
  CHECK(g.at("a").gate == Gate::Start);
  CHECK(g.at("b").gate == Gate::Wait);  // 3 + 3 nodes would pass max_nodes 4
  CHECK(g.at("b").reason.find("b needs 3") != std::string::npos);
  CHECK(g.at("c").gate == Gate::Wait);  // once one does not fit, the runs after it wait too
}
