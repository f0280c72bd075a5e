// The evidence rules: each shipped rule on lines as the tools print them (several wordings where
// versions differ), which rule wins when several match, and a config's rules before the shipped ones.
#include <doctest/doctest.h>

#include <algorithm>
#include <set>

#include "config/evidence_rule.h"
#include "decide/evidence_rules.h"

using namespace mlsup;
using namespace mlsup::decide;

namespace {

struct Sample {
  const char* line;
  const char* rule;      // "" = none matches
  const char* captured;  // the first group
};

// Lines as CUDA, NCCL, Gloo, torch, the kernel, Slurm, Python and bash print them.
const Sample kSamples[] = {
    {"[ 8123.402140] NVRM: Xid (PCI:0000:3b:00): 79, pid=48213, name=python, GPU has fallen off the bus.", "gpu_xid",
     "0000:3b:00"},
    {"NVRM: Xid (0000:3b:00): 79, GPU has fallen off the bus.", "gpu_xid", "0000:3b:00"},
    {"NVRM: Xid (PCI:0000:b1:00): 48, pid=9921, An uncorrectable double bit error (DBE) has been detected on GPU in "
     "the framebuffer at partition 2, subpartition 0.",
     "gpu_xid", "0000:b1:00"},
    {"NVRM: Xid (PCI:0000:18:00): 94, pid=1702, Contained: SM (0x1). RST: No, D-RST: No", "gpu_xid", "0000:18:00"},
    {"RuntimeError: CUDA error: uncorrectable ECC error encountered", "gpu_ecc", ""},
    {"CUDA_ERROR_ECC_UNCORRECTABLE", "gpu_ecc", ""},
    {"uncorrectable ECC errors on gpu-7: SRAM Uncorrectable : 2 (volatile)", "gpu_health_check", "gpu-7"},
    {"page retirement pending on gpu-7.cluster: reset the GPU", "gpu_health_check", "gpu-7.cluster"},
    {"Xid 79 on gpu-3: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.", "gpu_health_check", "gpu-3"},
    {"Unable to determine the device handle for GPU 0000:3B:00.0: GPU is lost.  Reboot the system to recover this GPU",
     "gpu_lost", ""},
    // newer NCCL
    {"gpu-12:48213:48390 [3] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 10.0.0.12<43567> failed : "
     "Connection refused",
     "nccl_connect", "10.0.0.12"},
    {"gpu-12:48213:48390 [3] misc/socket.cc:564 NCCL WARN socketStartConnect: Connect to 10.0.0.12<43567> failed : "
     "Connection timed out",
     "nccl_connect", "10.0.0.12"},
    {"gpu-3:1:2 [0] misc/socket.cc:599 NCCL WARN socketPollConnect: Connect to 10.1.4.7<53211> returned "
     "111(Connection refused) errno 115(Operation now in progress)",
     "nccl_connect", "10.1.4.7"},
    // older NCCL
    {"gpu-3:1:2 [0] include/socket.h:403 NCCL WARN Connect to 10.0.0.9<60211> failed : Connection refused",
     "nccl_connect", "10.0.0.9"},
    {"gpu-3:1:2 [0] transport/net_socket.cc:332 NCCL WARN NET/Socket : Connect to 10.0.0.14<38831> failed : No route "
     "to host",
     "nccl_connect", "10.0.0.14"},
    {"gpu-3:1:2 [0] include/socket.h:415 NCCL WARN Call to connect returned Connection refused, retrying",
     "nccl_connect_retry", ""},
    {"RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:799] connect [127.0.0.3]:39757: Connection refused",
     "gloo_connect", "127.0.0.3"},
    {"RuntimeError: Gloo connectFullMesh failed with [../third_party/gloo/gloo/transport/tcp/pair.cc:144] connect "
     "[10.0.0.21]:61813: Connection timed out",
     "gloo_connect", "10.0.0.21"},
    {"torch.distributed.DistNetworkError: The client socket has failed to connect to [gpu-1.cluster]:29500 (errno: "
     "111 - Connection refused).",
     "store_connect", "gpu-1.cluster"},
    {"torch.distributed.DistStoreError: The client socket has timed out after 900s while trying to connect to "
     "(gpu-1, 29500).",
     "store_connect", "gpu-1"},
    // mlsup_train.preflight: the node whose task did not join; another rank's lack of a verdict blames none
    {"mlsup preflight: rank 2 on gpu-3.cluster did not join within 60 s", "preflight_absent", "gpu-3.cluster"},
    {"mlsup preflight: rank 1 on gpu-2: no verdict from rank 0 on gpu-1 (Socket Timeout)", "", ""},
    // the watchdog as torch words it, newer and older
    {"[rank3]:[E ProcessGroupNCCL.cpp:563] [Rank 3] Watchdog caught collective operation timeout: "
     "WorkNCCL(SeqNum=18231, OpType=ALLREDUCE, NumelIn=26214400, NumelOut=26214400, Timeout(ms)=600000) ran for "
     "600030 milliseconds before timing out.",
     "nccl_watchdog", "3"},
    {"[rank5]:[E1105 10:02:11.123456 48213 ProcessGroupNCCL.cpp:616] [PG ID 0 PG GUID 0(default_pg) Rank 5] Watchdog "
     "caught collective operation timeout: WorkNCCL(SeqNum=77, OpType=_ALLGATHER_BASE, NumelIn=1, NumelOut=8, "
     "Timeout(ms)=1800000) ran for 1800087 milliseconds before timing out.",
     "nccl_watchdog", "5"},
    {"[E ProcessGroupNCCL.cpp:737] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(OpType=BROADCAST, "
     "Timeout(ms)=1800000) ran for 1800493 milliseconds before timing out.",
     "nccl_watchdog", "1"},
    {"torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1691, "
     "unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.18.1",
     "nccl_system_error", ""},
    {"ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.",
     "nccl_system_error", ""},
    {"RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1269, unhandled cuda error, "
     "NCCL version 2.14.3",
     "nccl_cuda_error", ""},
    {"ncclUnhandledCudaError: Call to CUDA function failed.", "nccl_cuda_error", ""},
    {"torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 79.15 GiB total capacity; "
     "75.02 GiB already allocated; 1.19 GiB free; 76.81 GiB reserved in total by PyTorch)",
     "cuda_oom", ""},
    {"RuntimeError: CUDA out of memory. Tried to allocate 512.00 MiB (GPU 3; 31.75 GiB total capacity)", "cuda_oom", ""},
    {"jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 4294967296 "
     "bytes.",
     "cuda_oom", ""},
    {"RuntimeError: CUDA error: an illegal memory access was encountered", "illegal_memory_access", ""},
    {"RuntimeError: DataLoader worker (pid 1234) is killed by signal: Bus error. It is possible that dataloader's "
     "workers are out of shared memory. Please try to raise your shared memory limit.",
     "dataloader_bus_error", ""},
    {"ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).",
     "dataloader_bus_error", ""},
    {"RuntimeError: DataLoader worker (pid 40122) is killed by signal: Killed.", "dataloader_killed", ""},
    {"slurmstepd: error: Detected 1 oom_kill event in StepId=4321.0. Some of the step tasks have been OOM Killed.",
     "oom_killer", ""},
    {"slurmstepd: error: Detected 1 oom-kill event(s) in step 4321.batch cgroup. Some of your processes may have been "
     "killed by the cgroup out-of-memory handler.",
     "oom_killer", ""},
    {"srun: error: gpu-7: task 12: Out Of Memory", "oom_killer", ""},
    {"[12345.678901] Memory cgroup out of memory: Killed process 48213 (python) total-vm:98765432kB", "oom_killer", ""},
    {"OSError: [Errno 28] No space left on device: '/scratch/ckpt/step_1200/model.pt'", "disk_full", ""},
    {"cp: error writing '/scratch/out/shard-3.bin': No space left on device", "disk_full", ""},
    {"OSError: [Errno 122] Disk quota exceeded", "disk_full", ""},
    {"ValueError: too many values to unpack (expected 2)", "python_exception", ""},
    {"[rank0]: torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:", "", ""},  // no Error or Exception
    {"[rank0]: KeyError: 'input_ids'", "python_exception", ""},
    {"Traceback (most recent call last):", "python_traceback", ""},
    {"gpu-3:1:2 [0] misc/socket.cc:538 NCCL WARN Net : Connection closed by remote peer gpu-4.cluster<56838>",
     "nccl_peer_closed", "gpu-4.cluster"},
    {"/var/spool/slurmd/job04321/slurm_script: line 14: 48213 Killed                  python train.py",
     "shell_killed", ""},
};

std::optional<Finding> one(const std::string& line) {
  const std::vector<std::string> lines{line};
  return match(shipped_rules(), lines);
}

}  // namespace

TEST_CASE("evidence: every shipped rule matches its lines, as each version words them") {
  std::set<std::string> covered;
  for (const auto& s : kSamples) {
    CAPTURE(s.line);
    const auto f = one(s.line);
    if (std::string(s.rule).empty()) {
      CHECK_FALSE(f);
      continue;
    }
    REQUIRE(f);
    CHECK(f->rule == s.rule);
    CHECK(f->captured == s.captured);
    CHECK(f->line_number == 1);
    covered.insert(f->rule);
  }
  for (const auto& r : shipped_rules()) {
    CAPTURE(r.name);
    CHECK(covered.contains(r.name));
  }
}

TEST_CASE("evidence: every shipped rule's class is one a config may name") {
  for (const auto& r : shipped_rules()) {
    CAPTURE(r.name);
    CHECK(std::find(config::kEvidenceClasses.begin(), config::kEvidenceClasses.end(), r.cls) !=
          config::kEvidenceClasses.end());
  }
}

TEST_CASE("evidence: lines that say nothing of a failure match no rule") {
  const std::vector<std::string> lines{
      "step 1200 loss 2.314 lr 3e-4 tokens/s 812331",
      "NCCL INFO Channel 00/32 :    0   1   2   3   4   5   6   7",
      "NCCL INFO comm 0x55d0 rank 3 nranks 8 cudaDev 3 busId 3b000 - Init COMPLETE",
      "saving checkpoint to /scratch/ckpt/step_1200",
      "Error: 3 retries left",  // no exception class
      "        SRAM Uncorrectable            : 0",  // nvidia-smi -q on a sound GPU
      "NVRM: Xid (PCI:0000:3b:00): 13, pid=1, Graphics Exception",  // a program's own fault, not the machine's
  };
  CHECK_FALSE(match(shipped_rules(), lines));
}

TEST_CASE("evidence: the NCCL line wins over the traceback that follows it") {
  const std::vector<std::string> lines{
      "step 4100 loss 1.92",
      "gpu-12:48213:48390 [3] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 10.0.0.12<43567> failed : "
      "Connection refused",
      "Traceback (most recent call last):",
      "  File \"train.py\", line 88, in <module>",
      "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1691, remote process exited or there "
      "was a network error, NCCL version 2.18.1",
  };
  const auto f = match(shipped_rules(), lines);
  REQUIRE(f);
  CHECK(f->rule == "nccl_connect");
  CHECK(f->line_number == 2);
  CHECK(f->captured == "10.0.0.12");
  CHECK(f->cls == "network");
  CHECK(f->blame == Blame::NodeInLine);
  CHECK(f->action == RuleAction::Retry);
  CHECK_FALSE(f->user);
}

TEST_CASE("evidence: of two causes the earlier line wins; a machine fault wins wherever it is") {
  const std::vector<std::string> oom_first{
      "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
      "NCCL WARN socketStartConnect: Connect to 10.0.0.12<43567> failed : Connection refused",
  };
  CHECK(match(shipped_rules(), oom_first)->rule == "cuda_oom");
  const std::vector<std::string> xid_last{
      "RuntimeError: CUDA error: an illegal memory access was encountered",
      "[ 8123.40] NVRM: Xid (PCI:0000:3b:00): 79, pid=48213, name=python, GPU has fallen off the bus.",
  };
  const auto f = match(shipped_rules(), xid_last);
  REQUIRE(f);
  CHECK(f->rule == "gpu_xid");
  CHECK(f->line_number == 2);
  CHECK(f->blame == Blame::NodeOfLog);
}

TEST_CASE("evidence: a generic sign gives way to a specific cause on a later line") {
  const std::vector<std::string> lines{
      "Traceback (most recent call last):",
      "OSError: [Errno 28] No space left on device",
  };
  const auto f = match(shipped_rules(), lines);
  REQUIRE(f);
  CHECK(f->rule == "disk_full");
  CHECK(f->action == RuleAction::StopAlert);
  const std::vector<std::string> software{"Traceback (most recent call last):", "  File \"x.py\", line 1",
                                          "[rank0]: ValueError: bad shape"};
  const auto s = match(shipped_rules(), software);
  REQUIRE(s);
  CHECK(s->rule == "python_exception");  // the exception's line says more than the traceback's first
  CHECK(s->line_number == 3);
  CHECK(s->cls == "software");
  CHECK(s->action == RuleAction::RetryNoBlame);
}

TEST_CASE("evidence: a config's rule is tried before the shipped ones, the first of them that matches wins") {
  const std::vector<config::EvidenceRuleSpec> specs{
      {.name = "bad_disk", .pattern = "No space left on (\\w+)", .cls = "software", .action = "stop"},
      {.name = "fabric", .pattern = "ibv_poll_cq failed on ([\\w.-]+)", .cls = "network", .blame = "node_in_line"},
  };
  const auto rules = all_rules(specs);
  REQUIRE(rules.size() == specs.size() + shipped_rules().size());
  const std::vector<std::string> lines{"ibv_poll_cq failed on gpu-9.ib", "OSError: [Errno 28] No space left on device"};
  const auto f = match(rules, lines);
  REQUIRE(f);
  CHECK(f->rule == "bad_disk");  // written first, though its line comes later
  CHECK(f->user);
  CHECK(f->line_number == 2);
  CHECK(f->captured == "device");
  CHECK(f->action == RuleAction::Stop);
  const std::vector<std::string> fabric{"NCCL WARN Call to connect returned Connection refused, retrying",
                                        "ibv_poll_cq failed on gpu-9.ib"};
  const auto g = match(rules, fabric);
  REQUIRE(g);
  CHECK(g->rule == "fabric");
  CHECK(g->captured == "gpu-9.ib");
  CHECK(g->blame == Blame::NodeInLine);
}

TEST_CASE("evidence: a long line is quoted trimmed; the text splits into lines") {
  const std::string line = "  RuntimeError: CUDA error: an illegal memory access was encountered " + std::string(500, 'x');
  const auto f = one(line);
  REQUIRE(f);
  CHECK(f->line.size() == kQuoteChars);
  CHECK(f->line.substr(0, 13) == "RuntimeError:");
  CHECK(f->line.substr(kQuoteChars - 3) == "...");
  CHECK(split_lines("a\r\nb\n\nc") == std::vector<std::string>{"a", "b", "", "c"});
  CHECK(split_lines("a\n") == std::vector<std::string>{"a"});
}

TEST_CASE("evidence: the names of blames and actions are the config's words") {
  CHECK(blame_name(Blame::RankInLine) == "rank_in_line");
  CHECK(blame_name(Blame::NodeOfLog) == "node_of_log");
  CHECK(rule_action_name(RuleAction::RetryNoBlame) == "retry_no_blame");
  CHECK(rule_action_name(RuleAction::StopAlert) == "stop_alert");
}
