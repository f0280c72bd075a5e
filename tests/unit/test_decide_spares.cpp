#include <doctest/doctest.h>

#include "decide/spares.h"

using namespace mlsup;

TEST_CASE("spares are advised from 16 nodes, one per 64 training nodes") {
  CHECK(decide::advised_spares(2) == 0);
  CHECK(decide::advised_spares(15) == 0);
  CHECK(decide::advised_spares(16) == 1);
  CHECK(decide::advised_spares(64) == 1);
  CHECK(decide::advised_spares(65) == 2);
  CHECK(decide::advised_spares(1000) == 16);
}

TEST_CASE("spare advice: for a wide job short of spares, never for a narrow one, a chain, or one that has them") {
  const auto wide = decide::spare_advice(64, 0, false);
  REQUIRE(wide.has_value());
  CHECK(wide->find("a job of 64 nodes with no spare node") != std::string::npos);
  CHECK(wide->find("slurm.spare_nodes: 1") != std::string::npos);
  const auto short_of = decide::spare_advice(200, 1, false);
  REQUIRE(short_of.has_value());
  CHECK(short_of->find("with 1 spare nodes") == std::string::npos);
  CHECK(short_of->find("slurm.spare_nodes: 4") != std::string::npos);
  CHECK_FALSE(decide::spare_advice(8, 0, false).has_value());
  CHECK_FALSE(decide::spare_advice(64, 0, true).has_value());
  CHECK_FALSE(decide::spare_advice(64, 1, false).has_value());
}
