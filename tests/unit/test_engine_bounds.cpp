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
  CHECK(f.events_of("hang-detected").empty());  // 20 s past the 10 s steady timeout
}

TEST_CASE("read_head: the first bytes, and a longer file's size after them") {
  test::TempDir dir;
  const auto small = dir.write("s", "12 saving\n");
  CHECK(util::read_head(small, 256) == "12 saving\n");
  const auto large = dir.write("l", std::string(300, 'a'));
  CHECK(util::read_head(large, 10) == std::string(10, 'a') + "\n... 300 bytes");
  CHECK_FALSE(util::read_head(dir.path() + "/missing", 10).has_value());
}

namespace {

// A pending job of the campaign asking for count nodes (reason Resources) on a 4-node partition.
slurm::JobId pending_job(EngineFixture& f, engine::Campaign& c, std::uint32_t count) {
  f.fake.node_table = {{"n1", "IDLE", false, false, "", {"debug"}}, {"n2", "IDLE", false, false, "", {"debug"}},
                       {"n3", "IDLE", false, false, "", {"debug"}}, {"n4", "IDLE", false, false, "", {"debug"}}};
  f.pass(c);
  const auto id = f.last_job();
  auto& job = f.fake.table[id];
  job.state = JobState::Pending;
  job.reason = "Resources";
  job.partition = "debug";
  job.node_count = count;
  job.num_tasks = count;  // one task per node
  return id;
}

}  // namespace

TEST_CASE("a pending job with spare nodes that the partition cannot hold asks for the training's nodes only") {
  EngineFixture f("", "slurm: {nodes: 3, spare_nodes: 1}\n");
  auto c = f.open();
  const auto id = pending_job(f, *c, 4);
  f.fake.node_table[3] = {"n4", "DOWN", false, true, "Not responding", {"debug"}};
  f.pass(*c);
  CHECK(f.calls("set_node_count 3 3 " + std::to_string(id)) == 1);  // the tasks shrink with the nodes
  CHECK(f.told("spares-dropped"));
  CHECK(f.told("spares-dropped", "shortfall", "asks 4 nodes, 3 usable: n4 down (Not responding)"));
  CHECK(f.fake.table[id].node_count == 3u);
  CHECK(f.fake.table[id].num_tasks == 3u);
  f.pass(*c);  // 3 asked, 3 usable: it waits for Slurm, nothing more
  CHECK(f.events_of("capacity-short").empty());
}

TEST_CASE("a pending job that the partition cannot hold, no spare or exclusion to give up: told once, kept for status") {
  EngineFixture f("", "slurm: {nodes: 4}\n");
  auto c = f.open();
  const auto id = pending_job(f, *c, 4);
  f.fake.node_table[0] = {"n1", "IDLE", true, false, "Kill task failed", {"debug"}};
  f.pass(*c);
  f.pass(*c);
  CHECK(f.events_of("capacity-short").size() == 1);  // once while it lasts
  CHECK(f.told("capacity-short", "shortfall", "asks 4 nodes, 3 usable: n1 drained (Kill task failed)"));
  CHECK(mlsup::test::slurp(f.config.state_dir + "/memory.json").find("asks 4 nodes, 3 usable") != std::string::npos);
  f.fake.node_table[0].drain = false;  // an admin resumes it
  f.pass(*c);
  CHECK(f.told("capacity-restored"));
  CHECK(f.fake.table[id].state == JobState::Pending);
}

TEST_CASE("a job short of nodes that starts at once when they return: the shortfall is told over, with spares too") {
  EngineFixture f("", "slurm: {nodes: 3, spare_nodes: 1}\n");
  auto c = f.open();
  const auto id = pending_job(f, *c, 4);
  for (int i = 1; i < 4; ++i) f.fake.node_table[i].drain = true;
  f.pass(*c);  // the spare dropped: 3 asked, 1 usable
  f.pass(*c);
  REQUIRE(f.told("capacity-short"));
  for (int i = 1; i < 4; ++i) f.fake.node_table[i].drain = false;  // an admin resumes them, and Slurm starts the job
  f.fake.set_state(id, JobState::Running, 0, "n1,n2,n3");
  f.pass(*c);
  CHECK(f.told("capacity-restored"));
  CHECK(mlsup::test::slurp(f.config.state_dir + "/memory.json").find("usable") == std::string::npos);
}

TEST_CASE("a pending job Slurm marks BadConstraints for want of nodes is a shortfall: its spare is dropped, no stuck alert") {
  EngineFixture f("", "slurm: {nodes: 3, spare_nodes: 1}\n");
  auto c = f.open();
  const auto id = pending_job(f, *c, 4);
  f.fake.table[id].reason = "BadConstraints";  // Slurm 22.05: the request cannot run on the nodes left it
  f.fake.node_table[3] = {"n4", "IDLE", true, false, "Kill task failed", {"debug"}};
  f.pass(*c);
  CHECK(f.calls("set_node_count 3 3 " + std::to_string(id)) == 1);
  CHECK(f.told("spares-dropped"));
  CHECK(f.events_of("pending-stuck").empty());
}
