// The hang's node dump read per node: a real step's output (captured on the local cluster: a 2-node
// job whose python ranks were SIGSTOPped, gdb installed, run as root so the kernel stacks show).
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include "observe/node_dump.h"

using namespace mlsup;

namespace {

std::string captured(const std::string& name) {
  std::ifstream in(std::string(MLSUP_SOURCE_DIR) + "/tests/unit/captured/" + name);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("node dump: each task's lines make its node's dump; processes with state, wait channel and frames") {
  const auto dumps = observe::parse_node_dumps(captured("node_dump_gdb.txt"));
  REQUIRE(dumps.size() == 2);
  CHECK(dumps[0].node == "cebba27n1");
  CHECK(dumps[1].node == "cebba27n2");
  for (const auto& d : dumps) {
    CHECK(d.tool == "gdb");
    CHECK(d.complete);
    CHECK(d.text.find(": ") != 0);  // the labels are taken off
  }
  REQUIRE(dumps[0].processes.size() == 4);  // the batch shell, srun and its helper, rank 0
  CHECK(dumps[0].processes[0] == observe::DumpedProcess{6391, "-", "batch", "S", "do_wait", "slurm_script", "wchan", 0, ""});
  const auto& rank0 = dumps[0].processes[3];
  CHECK(rank0.rank == "0");
  CHECK(rank0.state == "T");
  CHECK(rank0.wchan == "do_signal_stop");
  CHECK(rank0.by == "gdb");
  CHECK(rank0.frames > 5);
  REQUIRE(dumps[1].processes.size() == 1);
  CHECK(observe::describe(dumps[1].processes[0]) == "pid 6417 rank 1 python3 T do_signal_stop (gdb: 15 frames)");
  CHECK(dumps[1].text.find("#14 0x0000000000627bd1 in _start ()") != std::string::npos);
}

TEST_CASE("node dump: unlabelled lines and a task that never named its node are left out; an unfinished one is not complete") {
  const std::string out =
      "srun: error: a node did not answer\n"
      "0: node=n1\n"
      "0: tool=wchan\n"
      "1: tool=gdb\n"
      " 0: proc pid=12 rank=3 step=0 state=D wchan=nfs_wait comm=python3\n"
      "0: dumped pid=12 by=wchan frames=0\n"
      "0: flight-recorder pid=12 rank=3 pipe=/w/a/nccl_trace_rank_3.pipe dump=/w/a/nccl_trace_rank_3\n"
      "x: not a label\n";
  const auto dumps = observe::parse_node_dumps(out);
  REQUIRE(dumps.size() == 1);
  CHECK(dumps[0].node == "n1");
  CHECK_FALSE(dumps[0].complete);
  REQUIRE(dumps[0].processes.size() == 1);
  CHECK(observe::describe(dumps[0].processes[0]) == "pid 12 rank 3 python3 D nfs_wait, NCCL flight recorder dump asked: /w/a/nccl_trace_rank_3");
  CHECK(observe::parse_node_dumps("").empty());
}
