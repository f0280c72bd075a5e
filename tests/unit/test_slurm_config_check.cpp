// Before mlsup calls into Slurm it checks that Slurm has a configuration to read, and says what to set.
#include <doctest/doctest.h>

#include "slurm/config_check.h"
#include "support.h"

using mlsup::slurm::config_problem;

TEST_CASE("slurm config: without SLURM_CONF and without a default slurm.conf, the problem says what to set") {
  mlsup::test::TempDir dir;
  const auto problem = config_problem(nullptr, {dir.path() + "/slurm.conf"});
  REQUIRE(problem);
  CHECK(problem->find("SLURM_CONF is not set and there is no " + dir.path() + "/slurm.conf") != std::string::npos);
  CHECK(problem->find("export SLURM_CONF=/path/to/slurm.conf") != std::string::npos);
  CHECK(problem->find("source DIR/env") != std::string::npos);
  CHECK(config_problem("", {dir.path() + "/slurm.conf"}));  // set but empty is not set
}

TEST_CASE("slurm config: SLURM_CONF naming no file is named; a file there or at a default path is fine") {
  mlsup::test::TempDir dir;
  const auto conf = dir.write("slurm.conf", "ClusterName=x\n");
  const auto missing = config_problem((dir.path() + "/nope.conf").c_str(), {conf});
  REQUIRE(missing);
  CHECK(missing->find("SLURM_CONF=" + dir.path() + "/nope.conf is not a file") != std::string::npos);
  CHECK_FALSE(config_problem(conf.c_str(), {}));
  CHECK_FALSE(config_problem(nullptr, {dir.path() + "/absent", conf}));
}
