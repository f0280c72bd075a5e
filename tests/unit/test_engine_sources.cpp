// run and tick name their campaigns by config files and folders.
#include <doctest/doctest.h>

#include "supervise/loop.h"
#include "support.h"

namespace mlsup::test {

TEST_CASE("config sources: a folder stands for the *.yaml and *.yml files directly inside it, each config once") {
  TempDir dir;
  dir.write("team/b.yaml", "x");
  dir.write("team/a.yml", "x");
  dir.write("team/notes.txt", "x");
  dir.write("team/old/c.yaml", "x");
  dir.write("solo.yaml", "x");
  dir.write("empty/readme", "x");
  std::vector<std::string> problems;
  const auto files = engine::config_files({dir.path() + "/team", dir.path() + "/solo.yaml", dir.path() + "/team/b.yaml",
                                           dir.path() + "/missing.yaml", dir.path() + "/empty"},
                                          problems);
  CHECK(files == std::vector<std::string>{dir.path() + "/team/a.yml", dir.path() + "/team/b.yaml", dir.path() + "/solo.yaml"});
  REQUIRE(problems.size() == 2);
  CHECK(problems[0] == dir.path() + "/missing.yaml: no such file or folder");
  CHECK(problems[1].find("a folder without *.yaml or *.yml configs") != std::string::npos);
}

TEST_CASE("config sources: a config named again through a link or another path is supervised once") {
  TempDir dir;
  dir.write("team/a.yaml", "x");
  dir.write("team/b.yaml", "x");
  std::filesystem::create_symlink(dir.path() + "/team/a.yaml", dir.path() + "/link.yaml");
  std::vector<std::string> problems;
  const auto files = engine::config_files(
      {dir.path() + "/team", dir.path() + "/link.yaml", dir.path() + "/team/../team/b.yaml", dir.path() + "/link.yaml"},
      problems);
  CHECK(files == std::vector<std::string>{dir.path() + "/team/a.yaml", dir.path() + "/team/b.yaml"});
  CHECK(problems.empty());
}

}  // namespace mlsup::test
