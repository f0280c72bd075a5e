// The shipped evidence rules: what the common failures of GPU training print, as their tools word it.
#include "decide/evidence_rules.h"

#include <array>

namespace mlsup::decide {
namespace {

using B = Blame;
using A = RuleAction;
using P = Precedence;

struct Row {
  std::string_view name;
  std::string_view needle;   // a literal every line the pattern matches holds
  std::string_view pattern;  // the first group, where there is one: an address, a host or a rank
  std::string_view cls;
  B blame;
  A action;
  P precedence;
};

// The order of precedence (Precedence): machine faults first, in the table's order, whatever line
// they are on: a GPU that fails makes the training fail in any words, before or after the kernel's
// line. Then specific causes, the earliest line winning: a failure's later lines are mostly its
// effects (a peer's refused connection after a rank's CUDA error, the traceback that unwinds an NCCL
// error). Generic signs (a Python exception, a peer gone, a shell's "Killed") last, in the table's
// order, so that a traceback following an NCCL error is the effect and the NCCL line the cause.
constexpr std::array<Row, 22> kRows{{
    // The kernel's Xid of a GPU's hardware fault ("NVRM: Xid (PCI:0000:3b:00): 79, pid=..., ...", older
    // drivers without "PCI:"): 48 double-bit ECC, 63/64 ECC page retirement or row remapping, 74 NVLink,
    // 79 fallen off the bus, 92/94/95 ECC, 119/120 the GSP.
    {"gpu_xid", "Xid", R"(NVRM: Xid \((?:PCI:)?([0-9A-Fa-f:.]+)\): (?:48|63|64|74|79|92|94|95|119|120),)", "gpu_hardware",
     B::NodeOfLog, A::Retry, P::Machine},
    // CUDA's cudaErrorECCUncorrectable as the runtime and torch word it, and the driver API's name.
    {"gpu_ecc", "ECC", R"(uncorrectable ECC error encountered|CUDA_ERROR_ECC_UNCORRECTABLE)", "gpu_hardware",
     B::NodeOfLog, A::Retry, P::Machine},
    // The first line of examples/health/gpu_health.sh, which the plugin records when a node fails it.
    {"gpu_health_check", " on ", R"((?:uncorrectable ECC errors|page retirement pending) on ([\w.-]+):|^Xid \d+ on ([\w.-]+): )",
     "gpu_hardware", B::NodeInLine, A::Retry, P::Machine},
    {"gpu_lost", "GPU", R"(GPU has fallen off the bus|GPU is lost)", "gpu_hardware", B::NodeOfLog, A::Retry, P::Machine},
    // NCCL's socket transport: newer releases "socketStartConnect: Connect to ADDR<PORT> failed : WHY" and
    // "socketPollConnect: Connect to ADDR<PORT> returned 111(Connection refused) ...", older ones
    // "Connect to ADDR<PORT> failed : WHY" and "NET/Socket : Connect to ADDR<PORT> failed : WHY".
    {"nccl_connect", "Connect to ", R"(Connect to \[?([0-9A-Za-z_.:%-]+?)\]?<\d+> (?:failed|returned))", "network",
     B::NodeInLine, A::Retry, P::Cause},
    // mlsup_train.preflight (preflight.command): the node whose task did not join the all-reduce's store in time.
    {"preflight_absent", "mlsup preflight: rank", R"(mlsup preflight: rank \d+ on ([\w.-]+) did not join)", "network",
     B::NodeInLine, A::Retry, P::Cause},
    // Older NCCL, retrying a connection without naming the peer.
    {"nccl_connect_retry", "Call to connect", R"(Call to connect returned (?:Connection refused|Connection timed out))",
     "network", B::None, A::Retry, P::Cause},
    // Gloo's TCP pair: "connect [ADDR]:PORT: Connection refused".
    {"gloo_connect", "connect [", R"(connect \[([0-9A-Fa-f.:%]+)\]:\d+: (?:Connection refused|Connection timed out|No route to host))",
     "network", B::NodeInLine, A::Retry, P::Cause},
    // torch's TCPStore client ("... has failed to connect to [HOST]:PORT", "... has timed out after 900s while
    // trying to connect to (HOST, PORT)"): the store lives on rank 0's node, whose end is usually the training's own.
    {"store_connect", "client socket has",
     R"(client socket has failed to connect to \[([^\]]+)\]:\d+|client socket has timed out after \d+s while trying to connect to \(([^,]+), \d+\))",
     "network", B::None, A::Retry, P::Cause},
    // ProcessGroupNCCL's watchdog: "[Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=9,
    // OpType=ALLREDUCE, ...)"; older torch without SeqNum; newer "[PG ID 0 PG GUID 0(default_pg) Rank 3]". Every
    // rank that waited says it, so the rank is told, not blamed: the one that hung is the one that does not.
    {"nccl_watchdog", "Watchdog caught collective operation timeout",
     R"(Rank (\d+)\] Watchdog caught collective operation timeout: WorkNCCL\((?:SeqNum=\d+, )?OpType=\w+)",
     "nccl_timeout", B::None, A::Retry, P::Cause},
    {"nccl_system_error", "ystem", R"(unhandled system error|ncclSystemError)", "nccl_error", B::None, A::Retry,
     P::Cause},
    {"nccl_cuda_error", "nhandled", R"(unhandled cuda error|ncclUnhandledCudaError)", "gpu_fault", B::None,
     A::RetryNoBlame, P::Cause},
    // torch: "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate ..." (older torch
    // "RuntimeError: CUDA out of memory."); JAX/XLA: "RESOURCE_EXHAUSTED: Out of memory while trying to allocate".
    {"cuda_oom", "ut of memory", R"(CUDA out of memory|RESOURCE_EXHAUSTED: Out of memory while trying to allocate)",
     "cuda_oom", B::None, A::StopAlert, P::Cause},
    {"illegal_memory_access", "illegal memory access", R"(an illegal memory access was encountered)", "gpu_fault",
     B::None, A::RetryNoBlame, P::Cause},
    // A worker killed by SIGBUS reads shared memory past /dev/shm's size.
    {"dataloader_bus_error", "us error",
     R"(DataLoader worker \(pid \d+\) is killed by signal: Bus error|Unexpected bus error encountered in worker)",
     "shared_memory", B::None, A::StopAlert, P::Cause},
    {"dataloader_killed", "is killed by signal: Killed", R"(DataLoader worker \(pid \d+\) is killed by signal: Killed)",
     "host_oom", B::None, A::RetryNoBlame, P::Cause},
    // slurmstepd (newer "oom_kill event", older "oom-kill event(s)"), srun's task line, the kernel's.
    {"oom_killer", "", R"(Detected \d+ oom[-_]kill event|task \d+: Out Of Memory|Memory cgroup out of memory|Out of memory: Killed process)",
     "host_oom", B::None, A::RetryNoBlame, P::Cause},
    // ENOSPC and EDQUOT as Python, C libraries and the shell word them.
    {"disk_full", "", R"(No space left on device|\[Errno 28\]|Disk quota exceeded|\[Errno 122\])", "disk_full",
     B::None, A::StopAlert, P::Cause},
    {"python_exception", "", R"((?:^|\]: ?|^\d+: )(?:[A-Za-z_]\w*\.)*[A-Z]\w+(?:Error|Exception): )", "software",
     B::None, A::RetryNoBlame, P::Generic},
    {"python_traceback", "Traceback", R"(Traceback \(most recent call last\):)", "software", B::None, A::RetryNoBlame,
     P::Generic},
    // Newer NCCL: a peer's process ended (most often the effect of its own failure, told elsewhere).
    {"nccl_peer_closed", "closed by remote peer", R"(Connection closed by remote peer ([^<\s]+)<\d+>)", "network",
     B::None, A::Retry, P::Generic},
    // bash's report of a child killed by SIGKILL: the OOM killer's usual way, or a person's.
    {"shell_killed", "Killed", R"(line \d+: +\d+ Killed\b)", "host_oom", B::None, A::RetryNoBlame, P::Generic},
}};

}  // namespace

const std::vector<Rule>& shipped_rules() {
  static const std::vector<Rule> rules = [] {
    std::vector<Rule> out;
    for (const auto& r : kRows)
      out.push_back({std::string(r.name), std::regex(std::string(r.pattern), std::regex::ECMAScript),
                     std::string(r.needle), std::string(r.cls), r.blame, r.action, r.precedence});
    return out;
  }();
  return rules;
}

}  // namespace mlsup::decide
