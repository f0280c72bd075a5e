// The hang's node dump through the engine: a training without the helper's files gets one dump step
// over the nodes that answered the probe, each node's part kept in the hang folder and told.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "campaign/campaign.h"
#include "engine_fixture.h"
#include "slurm/fake_client.h"

using namespace mlsup;
using mlsup::test::EngineFixture;
using slurm::JobState;

namespace {

// What the dump step prints for nodes: task i on nodes[i], one stopped rank each.
std::string dump_output(const std::vector<std::string>& nodes) {
  std::string out;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const auto t = std::to_string(i) + ": ";
    out += t + "node=" + nodes[i] + "\n" + t + "tool=gdb\n" + t + "proc pid=" + std::to_string(100 + i) + " rank=" +
           std::to_string(i) + " step=0 state=T wchan=do_signal_stop comm=python3\n" + t + "#0  0x1 in poll ()\n" + t +
           "dumped pid=" + std::to_string(100 + i) + " by=gdb frames=1\n" + t + "done node=" + nodes[i] + "\n";
  }
  return out;
}

std::string hang_folder(const EngineFixture& f) { return f.config.state_dir + "/attempts/1/hang"; }

}  // namespace

TEST_CASE("a hang without the helper's files: one dump step over the job's nodes, a file per node, told before the cancel") {
  EngineFixture f("", "slurm: {nodes: 2}\n");
  f.node_dump = dump_output;
  auto c = f.open();
  f.hang_two_nodes(*c);
  REQUIRE(f.dumped.size() == 1);
  CHECK(f.dumped[0] == std::vector<std::string>{"n1", "n2"});
  const auto told = f.events_of(events::HangDump::kKind);
  REQUIRE(told.size() == 1);
  CHECK(told[0]["outcome"] == "exit 0");
  CHECK(told[0]["missing"].empty());
  CHECK(told[0]["summary"] == nlohmann::json::array({"n1: pid 100 rank 0 python3 T do_signal_stop (gdb: 1 frames)",
                                                     "n2: pid 101 rank 1 python3 T do_signal_stop (gdb: 1 frames)"}));
  REQUIRE(told[0]["dumps"].size() == 2);
  CHECK(told[0]["dumps"][1]["node"] == "n2");
  CHECK(told[0]["dumps"][1]["complete"] == true);
  CHECK(told[0]["dumps"][1]["processes"][0]["state"] == "T");
  const std::string file = hang_folder(f) + "/node-n2.txt";
  CHECK(told[0]["dumps"][1]["file"] == file);
  CHECK(test::slurp(file).find("#0  0x1 in poll ()\n") != std::string::npos);
  CHECK(f.submits() == 2);  // then cancelled and resubmitted as before
}

TEST_CASE("a hang's dump asks only the nodes that answered the probe; a node that printed nothing is named missing") {
  EngineFixture f("", "slurm: {nodes: 2}\n");
  f.silent = {"n2"};
  f.node_dump = [](const std::vector<std::string>&) { return dump_output({"n9"}); };  // a name it was not asked for
  auto c = f.open();
  f.hang_two_nodes(*c);
  REQUIRE(f.dumped.size() == 1);
  CHECK(f.dumped[0] == std::vector<std::string>{"n1"});
  const auto told = f.events_of(events::HangDump::kKind);
  REQUIRE(told.size() == 1);
  CHECK(told[0]["dumps"].empty());
  CHECK(told[0]["missing"] == nlohmann::json::array({"n1"}));
  CHECK_FALSE(std::filesystem::exists(hang_folder(f) + "/node-n9.txt"));
}

TEST_CASE("no dump where the helper made the ranks' files, nor with heartbeat.node_dump: off") {
  SUBCASE("the helper's files") {
    EngineFixture f("", "slurm: {nodes: 2}\n");
    f.node_dump = dump_output;
    std::filesystem::create_directories(hang_folder(f));
    std::ofstream(hang_folder(f) + "/rank-0.txt") << "mlsup stacks: rank=0 node=n1 pid=9\n";
    auto c = f.open();
    f.hang_two_nodes(*c);
    CHECK(f.dumped.empty());
    CHECK_FALSE(f.told("hang-dump"));
  }
  SUBCASE("off") {
    EngineFixture f("", "slurm: {nodes: 2}\n");
    f.config.heartbeat.node_dump = "off";
    f.node_dump = dump_output;
    auto c = f.open();
    f.hang_two_nodes(*c);
    CHECK(f.dumped.empty());
    CHECK_FALSE(f.told("hang-dump"));
    CHECK(f.submits() == 2);
  }
}
