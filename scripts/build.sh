#!/usr/bin/env bash
# Configures and builds mlsup into build/ (warnings are errors). Prints the binary's path last.
#   scripts/build.sh [TARGET...]   the targets named (the demo: mlsup), else everything (tests included)
# Shows the build's progress as one percentage line (a line per tenth when stderr is not a terminal) and
# its time; on a failure, the compiler's whole output.
set -euo pipefail
cd "$(dirname "$0")/.."
targets=()
for t in "$@"; do targets+=(--target "$t"); done
what=${*:-everything}
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMLSUP_WERROR=ON -DMLSUP_LINE_TABLES=ON >/dev/null

# Reads make's output and keeps only its percentages.
progress() {
  local line shown=-1 p
  while IFS= read -r line; do
    [[ $line =~ ^\[\ *([0-9]+)%\] ]] || continue
    p=${BASH_REMATCH[1]}
    if [ -t 2 ]; then
      [ "$p" = "$shown" ] || printf '\rbuilding %s: %3d%%' "$what" "$p" >&2
      shown=$p
    elif [ $((p / 10)) -gt "$shown" ]; then
      shown=$((p / 10))
      printf 'building %s: %d%%\n' "$what" "$p" >&2
    fi
  done
  [ ! -t 2 ] || printf '\n' >&2
}

log=$(mktemp /tmp/mlsup-build.XXXXXX)
trap 'rm -f "$log"' EXIT
started=$(date +%s)
if ! cmake --build build -j"$(nproc)" "${targets[@]}" 2>&1 | tee "$log" | progress; then
  cat "$log" >&2
  echo "build of $what failed (its output above)" >&2
  exit 1
fi
echo "built $what in $(($(date +%s) - started)) s on $(nproc) cores" >&2
echo "$PWD/build/mlsup"
