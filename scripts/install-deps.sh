#!/usr/bin/env bash
# Installs every Debian package that the build, the tests, the local cluster and the demo need.
# Idempotent: packages already present are left alone, and apt is not touched at all then.
# --tests adds what only the tests need: Debian's PyTorch (CPU), for the real-torch suite, and tmux,
# whose screen the status --watch test captures, strace, with which benchmarks/steady-fs.sh counts
# the supervisor's file system calls, and iptables, with which the real-torch suite makes one node's
# address unreachable, and gdb, whose stacks the hang's node dump takes where py-spy is not installed.
set -euo pipefail

PACKAGES=(
  build-essential cmake pkg-config
  libslurm-dev slurm-wlm slurm-wlm-basic-plugins-dev munge slurmdbd mariadb-server
  libyaml-cpp-dev libboost-dev libspdlog-dev libfmt-dev doctest-dev libcli11-dev nlohmann-json3-dev
  libssl-dev openssl ca-certificates
  python3 procps psmisc iproute2 util-linux curl prometheus tzdata
  python3-venv python3-pip python3-setuptools python3-wheel
)
[ "${1:-}" != --tests ] || PACKAGES+=(python3-torch tmux strace iptables gdb)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep 'install ok installed' >/dev/null || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
