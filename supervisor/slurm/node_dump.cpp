#include "slurm/node_dump.h"

#include "slurm/probe.h"

namespace mlsup::slurm {

// Each task: a "node=" and a "tool=" line, then per process of the job on this node (found by its
// environment: this job, this node, not this step) a "proc" line, its command line, its stacks and a
// "dumped" line counting their frames; nvidia-smi -q last. Every outside command has its own timeout.
// A rank whose PyTorch opened its NCCL flight recorder's pipe (TORCH_NCCL_DEBUG_INFO_PIPE_FILE, a
// FIFO <stem><rank>.pipe local to its node, read by its watchdog thread, so it answers while the rank
// is blocked in a collective) is asked for its dump through it once, and a "flight-recorder" line
// names where PyTorch writes it (TORCH_NCCL_DEBUG_INFO_TEMP_FILE<rank>).
const char* const kNodeDumpScript = R"SH(
node=${SLURMD_NODENAME:-$(hostname -s)}
job=$SLURM_JOB_ID
self=${SLURM_STEP_ID:-}
poked=""
tool=wchan
if command -v py-spy >/dev/null 2>&1; then tool=py-spy; elif command -v gdb >/dev/null 2>&1; then tool=gdb; fi
echo "node=$node"
echo "tool=$tool"
mine=$(grep -lsxz "SLURM_JOB_ID=$job" /proc/[0-9]*/environ)
[ -z "$mine" ] || mine=$(grep -lsxz "SLURMD_NODENAME=$node" $mine)
for f in $mine; do
  d=${f%/environ}
  pid=${d#/proc/}
  env=$( (tr '\0' '\n' <"$d/environ") 2>/dev/null) || continue
  step=$(printf '%s\n' "$env" | sed -n 's/^SLURM_STEP_ID=//p')
  [ -n "$self" ] && [ "$step" = "$self" ] && continue
  rank=$(printf '%s\n' "$env" | sed -n 's/^RANK=//p')
  [ -n "$rank" ] || [ -z "$step" ] || rank=$(printf '%s\n' "$env" | sed -n 's/^SLURM_PROCID=//p')
  comm=$( (tr ' ' '_' <"$d/comm") 2>/dev/null)
  state=$(sed -n 's/^State:[[:space:]]*\([A-Za-z]\).*/\1/p' "$d/status" 2>/dev/null)
  wchan=$( (cat "$d/wchan") 2>/dev/null)
  cmd=$( (tr '\0\n' '  ' <"$d/cmdline") 2>/dev/null)
  echo "proc pid=$pid rank=${rank:--} step=${step:-batch} state=${state:-?} wchan=${wchan:-0} comm=${comm:-?}"
  echo "cmdline: $cmd"
  out="" by=wchan
  case "${cmd%% *}" in
    *python*|*torchrun*|*accelerate*|*deepspeed*)
      if [ "$tool" = py-spy ]; then out=$(timeout 10 py-spy dump --pid "$pid" 2>&1); by=py-spy
      elif [ "$tool" = gdb ]; then
        out=$(timeout 15 gdb -p "$pid" -batch -nx -q -ex 'thread apply all bt' </dev/null 2>&1); by=gdb
      fi ;;
  esac
  [ -n "$out" ] && printf '%s\n' "$out"
  stem=$(printf '%s\n' "$env" | sed -n 's/^TORCH_NCCL_DEBUG_INFO_PIPE_FILE=//p')
  pipe="$stem$rank.pipe"
  if [ -n "$stem" ] && [ -n "$rank" ] && [ -p "$pipe" ]; then
    case " $poked " in *" $pipe "*) ;; *)
      poked="$poked $pipe"
      dump=$(printf '%s\n' "$env" | sed -n 's/^TORCH_NCCL_DEBUG_INFO_TEMP_FILE=//p')
      timeout 2 sh -c 'echo dump >"$1"' _ "$pipe" 2>/dev/null &&
        echo "flight-recorder pid=$pid rank=$rank pipe=$pipe dump=${dump:-/tmp/nccl_trace_rank_}$rank" ;;
    esac
  fi
  [ -r "$d/stack" ] && sed 's/^/kernel: /' "$d/stack" 2>/dev/null
  frames=$(printf '%s\n' "$out" | grep -cE '^#[0-9]+ |^ +[^ ].* \([^ ]+:[0-9]+\)$')
  echo "dumped pid=$pid by=$by frames=$frames"
done
if command -v nvidia-smi >/dev/null 2>&1; then
  echo "nvidia-smi -q:"
  timeout 20 nvidia-smi -q 2>&1
fi
echo "done node=$node"
)SH";

std::vector<std::string> node_dump_argv(JobId job, const std::vector<std::string>& nodes) {
  auto argv = one_task_per_node(job, nodes);
  argv.insert(argv.end(), {"--label", "--kill-on-bad-exit=0", "/bin/sh", "-c", kNodeDumpScript});
  return argv;
}

edges::ProcessResult run_node_dump(JobId job, const std::vector<std::string>& nodes, std::chrono::seconds timeout) {
  edges::ProcessRequest r;
  r.argv = node_dump_argv(job, nodes);
  r.timeout = timeout;
  return edges::run_process(r);
}

}  // namespace mlsup::slurm
