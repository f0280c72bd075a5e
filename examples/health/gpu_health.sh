#!/bin/sh
# A preflight GPU health check for mlsup's SPANK plugin (health_check=/path/gpu_health.sh).
# Runs as the job's user before every step on every node; exit 0 = healthy, anything else marks
# the node bad (and, with health_fail_job=yes, its tasks exit 79 before the training starts).
# The first line of output is recorded, so say what is wrong first.
#
# Checks: volatile uncorrectable ECC errors and pending retired pages (nvidia-smi -q), and the Xid
# codes that mean a broken GPU in the kernel log: 48 (double-bit ECC), 63/64 (row remapping,
# page retirement), 79 (fallen off the bus), 94 (contained ECC error). Without nvidia-smi the node
# has no NVIDIA GPU to judge: it passes, with a note.
# Then, where torch is importable, gpu_preflight.py (installed beside this script) checks that torch
# sees every GPU nvidia-smi lists, that each takes a small allocation and computes on it, and that a
# collective across them sums right; without torch that part is skipped with a note. Importing torch
# and waking the GPUs takes seconds: give the plugin health_timeout=60 when it runs.
# Environment: MLSUP_NODE / SLURMD_NODENAME (this node), SLURM_JOB_ID, SLURM_STEP_ID.
# Settings (edit here; the plugin runs the check with a clean environment): GPU_HEALTH_XIDS,
# GPU_HEALTH_TORCH (auto, or no to skip the torch preflight), GPU_HEALTH_PYTHON, GPU_HEALTH_TORCH_TIMEOUT.
set -u
node=${MLSUP_NODE:-${SLURMD_NODENAME:-$(hostname)}}
XIDS=${GPU_HEALTH_XIDS:-"48 63 64 79 94"}
TORCH=${GPU_HEALTH_TORCH:-auto}
PYTHON=${GPU_HEALTH_PYTHON:-/usr/bin/python3}
TORCH_TIMEOUT=${GPU_HEALTH_TORCH_TIMEOUT:-30}

if ! command -v nvidia-smi >/dev/null 2>&1; then
  echo "no nvidia-smi on $node: no GPU to check"
  exit 0
fi

if ! q=$(timeout 20 nvidia-smi -q -d ECC,PAGE_RETIREMENT 2>&1); then
  echo "nvidia-smi failed on $node: $(echo "$q" | head -n 1)"
  exit 1
fi

# Uncorrectable counters in each GPU's "Volatile" section: "DRAM Uncorrectable : 2" (A100 and
# later) or the "Double Bit" block's "Total : 2" (older GPUs).
ecc=$(echo "$q" | awk '
  /^ *Volatile *$/ { vol = 1; dbl = 0; next }
  /^ *Aggregate *$/ { vol = 0 }
  vol && /Double Bit/ { dbl = 1; next }
  vol && /Single Bit/ { dbl = 0 }
  vol && (/Uncorrectable/ || (dbl && /Total/)) {
    n = $0; sub(/.*: */, "", n); if (n ~ /^[0-9]+$/ && n > 0) { sub(/^ */, ""); gsub(/  +/, " "); print; exit } }')
if [ -n "$ecc" ]; then
  echo "uncorrectable ECC errors on $node: $ecc (volatile)"
  exit 1
fi
if echo "$q" | grep -Eq 'Pending[^:]*: *Yes'; then
  echo "page retirement pending on $node: reset the GPU"
  exit 1
fi

# Xid lines since boot ("NVRM: Xid (PCI:0000:3b:00): 79, ..."); dmesg may be restricted to root.
if log=$(dmesg 2>/dev/null || journalctl -k -q --no-pager 2>/dev/null); then
  for x in $XIDS; do
    hit=$(echo "$log" | grep -E "NVRM: Xid \([^)]*\): $x," | tail -n 1)
    if [ -n "$hit" ]; then
      echo "Xid $x on $node: ${hit#*NVRM: }"
      exit 1
    fi
  done
else
  echo "note: kernel log not readable on $node; Xid codes not checked" >&2
fi
# The torch preflight: its first line is its verdict.
summary=""
preflight="$(dirname "$0")/gpu_preflight.py"
if [ "$TORCH" != no ] && [ -f "$preflight" ] && [ -x "$PYTHON" ]; then
  expect=$(timeout 20 nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
  out=$(timeout "$TORCH_TIMEOUT" "$PYTHON" "$preflight" --expect "${expect:-0}" 2>&1)
  rc=$?
  first=$(echo "$out" | head -n 1)
  if [ $rc -eq 124 ]; then
    echo "torch preflight on $node did not finish in ${TORCH_TIMEOUT}s"
    exit 1
  elif [ $rc -ne 0 ]; then
    echo "torch preflight failed on $node: $first"
    exit 1
  fi
  summary=" ($first)"
fi
echo "gpus healthy on $node$summary"
