// What a campaign keeps stays bounded whatever the training writes: a heartbeat file is read no
// further than its first bytes, and memory.json does not grow with it.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "engine_fixture.h"
#include "util/files.h"

using namespace mlsup;
using mlsup::test::EngineFixture;
using slurm::JobState;

TEST_CASE("a heartbeat file of a megabyte is read for its first bytes; memory.json stays small; its growth is life") {
  EngineFixture f;
  auto c = f.open();
  f.pass(*c);
  f.fake.set_state(f.last_job(), JobState::Running);
  const std::string big = "7\n" + std::string(1 << 20, 'x');
  f.heartbeat(big);
  f.pass(*c);
  CHECK(std::filesystem::file_size(f.config.state_dir + "/memory.json") < 8 * 1024);
  for (int i = 0; i < 4; ++i) {  // the file grows (a training that appends): alive, though its head is the same
    f.clock += 5;
    std::ofstream(f.config.heartbeat.dir + "/attempt-1", std::ios::app) << "more\n";
    CHECK_FALSE(f.pass(*c).has_value());
  }
  CHECK(f.events().find("hang-detected") == std::string::npos);  // 20 s past the 10 s steady timeout
}

TEST_CASE("read_head: the first bytes, and a longer file's size after them") {
  test::TempDir dir;
  const auto small = dir.write("s", "12 saving\n");
  CHECK(util::read_head(small, 256) == "12 saving\n");
  const auto large = dir.write("l", std::string(300, 'a'));
  CHECK(util::read_head(large, 10) == std::string(10, 'a') + "\n... 300 bytes");
  CHECK_FALSE(util::read_head(dir.path() + "/missing", 10).has_value());
}
