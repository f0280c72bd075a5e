// What a probe of a job's nodes proves: silence counts only when the probe itself worked.
#include <doctest/doctest.h>

#include "decide/probe.h"

using mlsup::decide::judge_probe;
using mlsup::decide::ProbeFacts;
using V = std::vector<std::string>;

TEST_CASE("probe: a node silent while the others (or the control node) answer is silent") {
  CHECK(judge_probe({V{"n1", "n2", "n3"}, V{"n2"}, std::nullopt, {}}).silent == V{"n2"});
  CHECK(judge_probe({V{"n2"}, V{"n2"}, "n1", {}}).silent == V{"n2"});
  CHECK(judge_probe({V{"n2"}, V{"n2"}, std::nullopt, {}}).silent == V{"n2"});  // a 1-node job has nothing to compare
  CHECK(judge_probe({V{"n1", "n2"}, V{}, std::nullopt, {}}).silent.empty());
  CHECK(judge_probe({V{"n1", "n2"}, V{}, std::nullopt, {}}).doubt.empty());
}

TEST_CASE("probe: the control node silent too is a slow controller or network: only Slurm's own view blames") {
  const auto v = judge_probe({V{"n2"}, V{"n2", "n1"}, "n1", {}});
  CHECK(v.silent.empty());
  CHECK(v.doubt.find("control node n1") != std::string::npos);
  CHECK(judge_probe({V{"n2"}, V{"n2", "n1"}, "n1", V{"n2"}}).silent == V{"n2"});
}

TEST_CASE("probe: no node of several answered: the step could not start; nothing is blamed on the probe") {
  const auto v = judge_probe({V{"n1", "n2", "n3", "n4"}, V{"n1", "n2", "n3", "n4"}, std::nullopt, {}});
  CHECK(v.silent.empty());
  CHECK(v.doubt.find("no node answered") != std::string::npos);
}

TEST_CASE("probe: more than a few silent at once at width need Slurm's own view, node by node") {
  V nodes, silent;
  for (int i = 1; i <= 64; ++i) nodes.push_back("e" + std::to_string(i));
  for (int i = 1; i <= 9; ++i) silent.push_back("e" + std::to_string(i * 7));
  const auto v = judge_probe({nodes, silent, std::nullopt, V{"e14"}});
  CHECK(v.silent == V{"e14"});
  CHECK(v.doubt.find("9 nodes did not answer at once") != std::string::npos);
  CHECK(v.doubt.find("and 1 more") != std::string::npos);
  CHECK(judge_probe({nodes, V{"e3", "e40"}, std::nullopt, {}}).silent == V{"e3", "e40"});  // a few: the probe suffices
}
