// `mlsup report` on the command line: what it refuses, and what it leaves written then.
#include <doctest/doctest.h>

#include <filesystem>

#include "cli_run.h"
#include "support.h"

using namespace mlsup;

TEST_CASE("report: no config that loads -> exit 3 and no report written (an empty one would say all is well)") {
  test::TempDir dir;
  const auto out = dir.path() + "/morning";
  const auto r = test::mlsup_cli({"report", dir.path() + "/nosuch.yaml", "--out", out});
  CHECK(r.code == 3);
  CHECK(r.err.find("nosuch.yaml") != std::string::npos);
  CHECK(!std::filesystem::exists(out + "/report.md"));
  CHECK(!std::filesystem::exists(out + "/report.html"));
}

TEST_CASE("report: a --since it cannot read -> exit 2, said with the option's value") {
  test::TempDir dir;
  const auto r = test::mlsup_cli({"report", dir.path() + "/x.yaml", "--since", "soonish", "--out", dir.path()});
  CHECK(r.code == 2);
  CHECK(r.err.find("soonish") != std::string::npos);
  CHECK(!std::filesystem::exists(dir.path() + "/report.md"));
}
