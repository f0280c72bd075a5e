#!/usr/bin/env bash
# The Debian package as an admin installs it: CPack builds it from the build tree, `dpkg -i` installs
# it, and the installed files are used, never the build's: `mlsup --version`, `validate` of the
# installed reference config (its ../templates and ../examples paths), the man page, the bash
# completion, the plugstack snippet's paths, and the SPANK plugin loaded from its installed path by a
# private one-node cluster writing a job's per-node record. The package is removed at the end, even
# when a check fails. Needs root (dpkg) and a machine where the package is not installed already.
set -uo pipefail
source "$(dirname "$0")/lib.sh"

BUILD=$(dirname "${MLSUP:?set MLSUP to the built mlsup binary}")
USER_NAME=mlsupuser
fail_now() { echo "FAILED: $*"; echo "0 passed, 1 failed"; exit 1; }
[ "$(id -u)" = 0 ] || fail_now "installing the package needs root (dpkg -i); run this suite as root"
[ -f "$BUILD/CPackConfig.cmake" ] || fail_now "$BUILD/CPackConfig.cmake is missing (configure the build first)"
if dpkg-query -W -f='${Status}' mlsup 2>/dev/null | grep 'ok installed' >/dev/null; then
  fail_now "the mlsup package is installed on this machine already; this suite would replace and remove it (dpkg -r mlsup first)"
fi
id "$USER_NAME" >/dev/null 2>&1 || useradd -m "$USER_NAME" || fail_now "cannot create user $USER_NAME"

T=$(mktemp -d /tmp/mlsup-package.XXXXXX)
chmod 0755 "$T"
installed=no
cleanup() {
  "$REPO/tests/cluster/cluster.sh" stop --dir "$T/cluster" >/dev/null 2>&1
  if [ "$installed" = yes ]; then
    dpkg -r mlsup >/dev/null 2>&1 && echo "package removed" || echo "FAILED: dpkg -r mlsup"
  fi
  rm -rf "$T"
}
trap cleanup EXIT
step() { echo "--- $* ($(( $(date +%s) - SUITE_STARTED ))s)"; }

step "build the package"
timeout 120 cpack --config "$BUILD/CPackConfig.cmake" -B "$T/pkg" >"$T/cpack.log" 2>&1 || { cat "$T/cpack.log"; fail_now "cpack"; }
DEB=$(ls "$T"/pkg/mlsup_*.deb 2>/dev/null | head -1)
[ -n "$DEB" ] || fail_now "cpack made no mlsup_*.deb"
echo "package: $(basename "$DEB"), $(du -k "$DEB" | cut -f1) KiB"
depends=$(dpkg-deb -f "$DEB" Depends)
echo "Depends: $depends"
for lib in libslurm libyaml-cpp libfmt; do  # (spdlog is linked only where used: not at all)
  check "the package depends on $lib" grep -q "$lib" <<<"$depends"
done

step "install"
installed=yes
timeout 120 dpkg -i "$DEB" >"$T/dpkg.log" 2>&1 || { cat "$T/dpkg.log"; fail_now "dpkg -i $(basename "$DEB")"; }
files=$(dpkg -L mlsup)
BIN=$(grep '/bin/mlsup$' <<<"$files")
INST=${BIN%/bin/mlsup}
SHARE="$INST/share/mlsup"
SO="$INST/lib/slurm/mlsup_spank.so"
echo "installed under $INST"
check "the package installs under /usr, as Debian's policy asks (not /usr/local)" [ "$INST" = /usr ]
check "the plugin is installed at $SO" [ -f "$SO" ]

step "the installed mlsup"
version=$("$BIN" --version 2>"$T/version.err")
echo "$version"
check "--version names mlsup and the Slurm it was built against" \
  grep -qzE 'mlsup [0-9.]+.built against Slurm [0-9]+\.[0-9]+\.[0-9]+' <<<"$version"
check "--version warns of nothing here (built and run against the same libslurm)" [ ! -s "$T/version.err" ]
check "validate passes on the installed reference config" "$BIN" validate "$SHARE/configs/reference.yaml"
for f in templates/srun.sbatch.tmpl templates/torchrun.sbatch.tmpl examples/trainer/train.py examples/demo/campaign.yaml; do
  check "share/mlsup/$f is installed" [ -f "$SHARE/$f" ]
done
for u in mlsup-run.service mlsup-tick.service mlsup-tick.timer; do
  check "the systemd user unit $u is installed where systemd looks for user units" [ -f "$INST/lib/systemd/user/$u" ]
done
if command -v man >/dev/null; then
  # man finds pages by PATH (man-db's MANPATH_MAP): a user's PATH with the installed bin/ first
  # (/usr/local/man is Debian's link to /usr/local/share/man).
  page=$(env -u MANPATH PATH="$INST/bin:/usr/bin:/bin" man -w mlsup 2>&1)
  check "man -w mlsup finds the installed page ($page)" [ "$(readlink -f "$page")" = "$(readlink -f "$INST/share/man/man1/mlsup.1")" ]
else
  check "the man page is installed" [ -f "$INST/share/man/man1/mlsup.1" ]
fi
COMPLETION="$INST/share/bash-completion/completions/mlsup"
check "bash completion completes a verb" [ "$(bash -c 'shopt -s extglob; source "$1"; COMP_WORDS=(mlsup valid); COMP_CWORD=1; _mlsup; echo "${COMPREPLY[*]}"' _ "$COMPLETION")" = validate ]
SNIPPET="$SHARE/plugstack.conf.d/mlsup.conf"
check "the plugstack snippet names the installed plugin" grep -q "^optional $SO " "$SNIPPET"
missing=$(grep -v '^#' "$SNIPPET" | grep -oE '/[^ =]+' | while read -r p; do [ -e "$p" ] || echo "$p"; done)
check "every path in the plugstack snippet exists${missing:+ (missing: $missing)}" [ -z "$missing" ]

step "the installed plugin in a private cluster"
echo "required $SO" >"$T/plugstack.conf"
conf_line=$(timeout 120 "$REPO/tests/cluster/cluster.sh" start --dir "$T/cluster" --nodes 1 --plugstack "$T/plugstack.conf") ||
  fail_now "the cluster with the installed plugin did not start"
export "$conf_line"
source "$T/cluster/cluster.info"
S="$T/user/state"
install -d -o "$USER_NAME" -m 0755 "$T/user" "$S"
job=$(cd "$T/user" && runuser -u "$USER_NAME" -- env -i PATH=/usr/bin:/bin SLURM_CONF="$SLURM_CONF" \
  timeout 30 sbatch --parsable -o "$T/user/job-%j.out" --mlsup-run=pkg --mlsup-state-dir="$S" --wrap 'srun true')
echo "job $job"
ended() { case "$(job_state "$1")" in COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL) return 0 ;; esac; return 1; }
wait_until 60 ended "$job"
check "the job completed ($(job_state "$job"))" [ "$(job_state "$job")" = COMPLETED ]
check "the installed plugin wrote the job's record for ${PREFIX}1" [ -s "$S/nodes/$job/${PREFIX}1.jsonl" ]

finish
