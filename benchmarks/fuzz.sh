#!/usr/bin/env bash
# Fuzzes the parsers that read outside input (tests/fuzz/fuzz_*.cpp) with AFL++, one target after
# another, starting from each target's seed corpus; prints per target the executions, their rate, the
# edges found, the crashes and the hangs. Each crash is copied into tests/fuzz/crashes/<target>/, where
# ctest replays it from then on (see tests/fuzz/crashes/README.md). Exits 1 when any target crashed.
#
#   benchmarks/fuzz.sh [TARGET...] [--runs N | --seconds S] [--resume]
#
# TARGET: config, template, scontrol, ... (the NAME of tests/fuzz/fuzz_NAME.cpp); none = all of them.
# --runs N: about N executions per target (default 1000000). --seconds S: at most S seconds per target
# (alone, S seconds whatever the executions; --seconds 30 is a quick look). --resume: go on from a
# target's earlier findings in build-fuzz/out/<target>/ (AFL++ keeps its queue and its count of
# executions, so --runs stays the total), for a long run cut short.
#
# Needs the Debian package afl++ (installed when missing). Everything goes into build-fuzz/: the
# harnesses built with ASan and UBSan (MLSUP_SANITIZE) in cmake/, AFL++'s findings in out/<target>/.
# The harnesses' files go to /dev/shm/mlsup-fuzz-<target>/ (else build-fuzz/tmp/), removed afterwards.
# ASan keeps no allocation stacks and a small quarantine here (a crash's full report comes from its
# replay: build/fuzz/fuzz_<target> FILE): a third (config) to a half (memory) less CPU per input.
# Instrumentation, best first:
# - AFL++'s GCC plugin (afl-g++-fast) in persistent mode, with AFL++'s driver libAFLDriver.a. Debian
#   12's afl++ 4.04c ships a plugin that refuses Debian 12's GCC ("GCC and plugin have incompatible
#   versions"); with AFLPP_SRC naming AFL++'s source of the installed version (git clone -b 4.04c
#   https://github.com/AFLplusplus/AFLplusplus) the plugin is built here, against gcc-12-plugin-dev.
# - Else the classic afl-g++ (assembly-level), one fork per input: far slower.
# Debian 12's clang cannot compile libstdc++'s <expected>, so AFL++'s LLVM modes are no option.
set -euo pipefail
cd "$(dirname "$0")/.."

build=build-fuzz
runs=1000000
runs_given=""
seconds=""
resume=""
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs=$2; runs_given=1; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --resume) resume=1; shift ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
if [ ${#targets[@]} -eq 0 ]; then
  for f in tests/fuzz/fuzz_*.cpp; do targets+=("$(basename "${f%.cpp}" | sed 's/^fuzz_//')"); done
fi
for t in "${targets[@]}"; do
  [ -f "tests/fuzz/fuzz_$t.cpp" ] || { echo "fuzz.sh: no target $t (tests/fuzz/fuzz_$t.cpp)" >&2; exit 2; }
done

apt_install() {
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  echo "fuzz.sh: installing $* from apt" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$@" >&2
}

# True when afl-g++-fast builds a program in persistent mode.
plugin_works() {
  local probe status=0
  probe=$(mktemp -d)
  printf '__AFL_FUZZ_INIT();\nint main() { while (__AFL_LOOP(10)) {} }\n' >"$probe/p.cpp"
  afl-g++-fast "$probe/p.cpp" -o "$probe/p" >/dev/null 2>&1 || status=1
  rm -rf "$probe"
  return $status
}

# Builds AFL++'s GCC plugin from $AFLPP_SRC into build-fuzz/afl/, beside links to the packaged runtime.
build_plugin() {
  local gcc_major plugin_dir
  gcc_major=$(gcc -dumpversion | cut -d. -f1)
  dpkg-query -W -f='${Status}' "gcc-$gcc_major-plugin-dev" 2>/dev/null | grep 'ok installed' >/dev/null ||
    apt_install "gcc-$gcc_major-plugin-dev"
  plugin_dir=$(gcc -print-file-name=plugin)
  mkdir -p "$build/afl"
  ln -sf /usr/lib/afl/* "$build/afl/"
  rm -f "$build/afl/afl-gcc-pass.so"
  g++ -O2 -std=c++11 -fPIC -fno-rtti -I"$plugin_dir/include" -I"$plugin_dir" -I"$AFLPP_SRC/include" -shared \
    "$AFLPP_SRC/instrumentation/afl-gcc-pass.so.cc" -o "$build/afl/afl-gcc-pass.so"
  export AFL_PATH=$PWD/$build/afl
}

# Chooses the instrumentation (see the top), setting CC, CXX, driver and instrumentation.
choose_compiler() {
  [ -f "$build/afl/afl-gcc-pass.so" ] && export AFL_PATH=$PWD/$build/afl
  if ! plugin_works && [ -n "${AFLPP_SRC:-}" ]; then build_plugin; fi
  if plugin_works; then
    CC=afl-gcc-fast CXX=afl-g++-fast driver=/usr/lib/afl/libAFLDriver.a
    instrumentation="GCC plugin (afl-g++-fast), persistent mode${AFL_PATH:+, plugin built into $AFL_PATH}"
  else
    export AFL_CC_COMPILER=GCC
    CC=afl-gcc CXX=afl-g++ driver=""
    instrumentation="classic afl-g++, a fork per input (the GCC plugin does not load; see --help)"
  fi
}

build_harnesses() {
  local tree=$build/cmake
  if [ -f "$tree/CMakeCache.txt" ] && ! grep -q "^CMAKE_CXX_COMPILER:.*/$CXX\$" "$tree/CMakeCache.txt"; then
    rm -rf "$tree"  # built with the other instrumentation
  fi
  cmake -S . -B "$tree" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMLSUP_SANITIZE=ON -DMLSUP_FUZZ_MAIN="$driver" \
    -DCMAKE_C_COMPILER="$(command -v "$CC")" -DCMAKE_CXX_COMPILER="$(command -v "$CXX")" >/dev/null
  cmake --build "$tree" -j"$(nproc)" --target "${targets[@]/#/fuzz_}" >"$build/build.log" 2>&1 ||
    { tail -30 "$build/build.log" >&2; echo "fuzz.sh: the build failed ($build/build.log)" >&2; exit 1; }
}

# A field of AFL++'s fuzzer_stats file.
stat() { sed -n "s/^$2 *: //p" "$1" | head -1; }

# Copies target's crashes into tests/fuzz/crashes/<target>/ (AFL's "id:000003,sig:06,..." becomes
# "afl-DATE-000003-sig06") and prints how many.
keep_crashes() {
  local target=$1 found=$2 n=0 f id
  for f in "$found"/id:*; do
    [ -e "$f" ] || continue
    mkdir -p "tests/fuzz/crashes/$target"
    id=$(basename "$f" | sed -E 's/^id:([0-9]+),sig:([0-9]+).*/\1-sig\2/')
    cp "$f" "tests/fuzz/crashes/$target/afl-$(date +%Y%m%d)-$id"
    n=$((n + 1))
  done
  echo $n
}

# The folder a target's harness writes its files in (TMPDIR): in memory (/dev/shm) where there is one.
scratch_dir() {
  if [ -d /dev/shm ] && [ -w /dev/shm ]; then echo "/dev/shm/mlsup-fuzz-$1"; else echo "$PWD/$build/tmp/$1"; fi
}

fuzz_one() {
  local target=$1 out="$build/out/$1" limit=() input=() started scratch seeds="tests/fuzz/corpus/$1"
  scratch=$(scratch_dir "$target")
  if [ -n "$resume" ] && [ -f "$out/default/fuzzer_stats" ]; then
    seeds=-  # AFL++'s in-place resume: its queue, and its stats (execs_done) carried on
  else
    rm -rf "$out"
  fi
  rm -rf "$scratch"
  mkdir -p "$out" "$scratch"
  [ -n "$seconds" ] && [ -z "$runs_given" ] || limit+=(-E "$runs")
  [ -z "$seconds" ] || limit+=(-V "$seconds")
  started=$(date +%s)
  [ -n "$driver" ] || input=(@@)  # replay_main reads the file AFL++ names; AFL++'s driver, its shared memory
  TMPDIR="$scratch" AFL_NO_UI=1 AFL_SKIP_CPUFREQ=1 AFL_NO_AFFINITY=1 \
    AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 \
    ASAN_OPTIONS=abort_on_error=1:symbolize=0:detect_leaks=0:malloc_context_size=0:quarantine_size_mb=16 \
    UBSAN_OPTIONS=abort_on_error=1:halt_on_error=1:print_stacktrace=1 \
    afl-fuzz -i "$seeds" -o "$out" "${limit[@]}" -t 2000 -- "$build/cmake/fuzz/fuzz_$target" "${input[@]}" \
    >>"$out/afl.log" 2>&1 || { tail -20 "$out/afl.log" >&2; echo "fuzz.sh: afl-fuzz failed on $target" >&2; return 1; }
  local stats="$out/default/fuzzer_stats" crashes
  crashes=$(keep_crashes "$target" "$out/default/crashes")
  printf '%-14s %10s %9s %7s %7s %8s %6s %7s\n' "$target" "$(stat "$stats" execs_done)" "$(stat "$stats" execs_per_sec)" \
    "$(stat "$stats" edges_found)" "$(stat "$stats" corpus_count)" "$crashes" "$(stat "$stats" saved_hangs)" \
    "$(( $(date +%s) - started ))s"
  rm -rf "$scratch"
  [ "$crashes" -eq 0 ]
}

command -v afl-fuzz >/dev/null || apt_install afl++
mkdir -p "$build"
choose_compiler
build_harnesses
budget="about $runs executions"
[ -z "$seconds" ] || budget="$seconds s"
[ -z "$seconds" ] || [ -z "$runs_given" ] || budget="about $runs executions or $seconds s, what comes first"
echo "fuzz.sh: $instrumentation; $budget per target"
printf '%-14s %10s %9s %7s %7s %8s %6s %7s\n' target execs exec/s edges corpus crashes hangs wall
failed=0
for t in "${targets[@]}"; do fuzz_one "$t" || failed=1; done
echo "fuzz.sh: AFL++'s findings (queue, crashes, hangs) are in $build/out/<target>/default/"
exit $failed
