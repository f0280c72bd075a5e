// The node dump's own script, run here as a task of a dump step would run it (no Slurm needed): it
// finds the job's process by its environment, says what it does, and asks a stand-in for PyTorch's
// NCCL watchdog for its flight recorder dump through the rank's pipe.
#include <doctest/doctest.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "edges/process.h"
#include "observe/node_dump.h"
#include "slurm/node_dump.h"
#include "support.h"
#include "util/strings.h"

using namespace mlsup;

namespace {

// A rank of job 987654321 on node dumptest (step 0, RANK=3) that opens the flight recorder's pipe as
// PyTorch's watchdog does (non-blocking reader) and writes the dump when anything arrives on it.
const char* kStandIn = R"PY(
import os, select, sys, time
stem, rank = os.environ["TORCH_NCCL_DEBUG_INFO_PIPE_FILE"], os.environ["RANK"]
os.mkfifo(stem + rank + ".pipe")
fd = os.open(stem + rank + ".pipe", os.O_RDONLY | os.O_NONBLOCK)
open(sys.argv[1] + ".tmp", "w").write(str(os.getpid()))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
end = time.time() + 60
while time.time() < end:
    ready, _, _ = select.select([fd], [], [], 0.2)
    if ready and os.read(fd, 64):
        open(os.environ["TORCH_NCCL_DEBUG_INFO_TEMP_FILE"] + rank, "w").write("trace")
    time.sleep(0.05)
)PY";

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

bool wait_for(const std::string& path) {
  for (int i = 0; i < 100 && !std::filesystem::exists(path); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  return std::filesystem::exists(path);
}

}  // namespace

TEST_CASE("node dump script: the job's process on this node, its state, and its NCCL flight recorder asked through its pipe") {
  test::TempDir dir;
  const std::string stem = dir.path() + "/nccl_trace_rank_";
  const std::string ready = dir.path() + "/ready";
  const std::string script = dir.write("standin.py", kStandIn);
  const std::string launch = "env SLURM_JOB_ID=987654321 SLURMD_NODENAME=dumptest SLURM_STEP_ID=0 RANK=3 "
                             "TORCH_NCCL_DEBUG_INFO_PIPE_FILE=" + stem + " TORCH_NCCL_DEBUG_INFO_TEMP_FILE=" + stem +
                             " /usr/bin/python3 " + script + " " + ready + " >/dev/null 2>&1 &";
  REQUIRE(std::system(launch.c_str()) == 0);
  REQUIRE(wait_for(ready));
  const int pid = std::stoi(slurp(ready));

  edges::ProcessRequest r;
  r.argv = {"/bin/sh", "-c", slurm::kNodeDumpScript};
  r.env_add = {{"SLURM_JOB_ID", "987654321"}, {"SLURMD_NODENAME", "dumptest"}, {"SLURM_STEP_ID", "1"}};
  r.timeout = std::chrono::seconds(60);
  const auto done = edges::run_process(r);
  ::kill(pid, SIGKILL);
  REQUIRE(done.exit_code == 0);
  std::string labelled;
  for (const auto& line : util::split(done.out, '\n')) labelled += "0: " + line + "\n";  // as srun --label gives it
  const auto dumps = observe::parse_node_dumps(labelled);
  REQUIRE(dumps.size() == 1);
  CHECK(dumps[0].node == "dumptest");
  CHECK(dumps[0].complete);
  REQUIRE(dumps[0].processes.size() == 1);  // the stand-in, not the script's own step
  const auto& p = dumps[0].processes[0];
  CHECK(p.pid == pid);
  CHECK(p.rank == "3");
  CHECK(p.step == "0");
  CHECK(p.comm == "python3");
  CHECK_FALSE(p.state.empty());
  CHECK(p.by == dumps[0].tool);  // a python process gets the best tool there is
  CHECK(p.flight_recorder == stem + "3");
  CHECK(wait_for(stem + "3"));
}
