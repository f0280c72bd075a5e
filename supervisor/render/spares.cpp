#include "render/spares.h"

#include <charconv>

#include "render/chain.h"
#include "util/strings.h"

namespace mlsup::render {
namespace {

// The preamble; @DIR@, @FENCED@, @NNODES@, @TPN@, @NTASKS@, @WAIT@, @SIGNAL@, @NO_RETRY@, @FAILED@ and @SHELL@
// are filled in. POSIX sh, also under a `set -e` of the script's #! line.
constexpr std::string_view kPreamble = R"SH(# mlsup spare nodes: this job holds more nodes than the training's @NNODES@. These lines run the
# script's own lines below once per attempt, on @NNODES@ of the job's nodes, and run the next attempt
# mlsup hands over when one fails, inside this job. The runs see MLSUP_STEP_BODY=1.
if [ -z "${MLSUP_STEP_BODY:-}" ]; then
  mlsup_dir=@DIR@
  mlsup_pid='' mlsup_status=0 mlsup_failed_at='' mlsup_taken=0
  mlsup_nodes=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | sed -n '1,@NNODES@p' | paste -sd, -)
  # mlsup_run ARGS: claims attempt $MLSUP_ATTEMPT, records this job and the nodes, and runs the
  # script on them in the background (the environment steers its plain srun: hostfile, rank order).
  mlsup_run() {
    mlsup_taken=$MLSUP_ATTEMPT
    mlsup_at=$mlsup_dir/claims/$MLSUP_ATTEMPT
    mkdir -p "$mlsup_dir/claims" 2>/dev/null || :
    if ! mkdir "$mlsup_at" 2>/dev/null; then
      echo "mlsup: attempt $MLSUP_ATTEMPT is claimed already; this job does not run it" >&2
      return 1
    fi
    printf '%s %s\n' "$SLURM_JOB_ID" "$mlsup_nodes" > "$mlsup_at/task.tmp" && mv "$mlsup_at/task.tmp" "$mlsup_at/task" ||
      { echo "mlsup: cannot record the claim of attempt $MLSUP_ATTEMPT in $mlsup_at" >&2; exit @FAILED@; }
    for mlsup_node in $(echo "$mlsup_nodes" | tr , ' '); do
      mlsup_i=0
      while [ "$mlsup_i" -lt @TPN@ ]; do echo "$mlsup_node"; mlsup_i=$((mlsup_i + 1)); done
    done > "$mlsup_at/hosts"
    echo "mlsup: attempt $MLSUP_ATTEMPT runs on $mlsup_nodes" >&2
    MLSUP_STEP_BODY=1 MLSUP_STEP_NODES=$mlsup_nodes SLURM_HOSTFILE=$mlsup_at/hosts SLURM_DISTRIBUTION=arbitrary \
      SLURM_OVERLAP=1 SLURM_NNODES=@NNODES@ SLURM_JOB_NUM_NODES=@NNODES@ SLURM_NTASKS=@NTASKS@ SLURM_NPROCS=@NTASKS@ \
      SLURM_TASKS_PER_NODE='@TPN@(x@NNODES@)' SLURM_JOB_NODELIST=$mlsup_nodes SLURM_NODELIST=$mlsup_nodes \
      @SHELL@ "$0" "$@" &
    mlsup_pid=$!
    mlsup_failed_at=''
  }
  mlsup_forward() {
    if [ -n "$mlsup_pid" ]; then kill -@SIGNAL@ "$mlsup_pid" 2>/dev/null || :; fi
  }
  trap mlsup_forward @SIGNAL@
  mlsup_run "$@" || exit @FAILED@
  while :; do
    mlsup_next=''
    if [ -r "$mlsup_dir/next.env" ]; then mlsup_next=$(. "$mlsup_dir/next.env" && echo "${MLSUP_FOR_JOB:-}:${MLSUP_ATTEMPT:-0}"); fi
    if [ "${mlsup_next%%:*}" = "$SLURM_JOB_ID" ] && [ "${mlsup_next#*:}" != "$mlsup_taken" ]; then
      . "$mlsup_dir/next.env"
      if [ "$MLSUP_ATTEMPT" = 0 ]; then
        echo "mlsup: no attempt is handed to this job; it ends" >&2
        exit "$mlsup_status"
      fi
      if [ "$MLSUP_ATTEMPT" -gt "$mlsup_taken" ]; then
        if [ -n "$mlsup_pid" ]; then kill -KILL "$mlsup_pid" 2>/dev/null || :; fi
        mlsup_nodes=$MLSUP_STEP_NODES
        mlsup_run "$@" || :
      fi
    fi
    if [ -n "$mlsup_pid" ] && ! kill -0 "$mlsup_pid" 2>/dev/null; then
      mlsup_status=0
      wait "$mlsup_pid" || mlsup_status=$?
      mlsup_pid=''
      { echo "$mlsup_status" > "$mlsup_dir/claims/$mlsup_taken/end.tmp" &&
        mv "$mlsup_dir/claims/$mlsup_taken/end.tmp" "$mlsup_dir/claims/$mlsup_taken/end"; } 2>/dev/null || :
      # A run that stopped because mlsup fenced its attempt (a hang) exits 0 too: then the next comes.
      if [ "$mlsup_status" = @NO_RETRY@ ] || { [ "$mlsup_status" = 0 ] && [ ! -e @FENCED@/"$mlsup_taken" ]; }; then
        exit "$mlsup_status"
      fi
      echo "mlsup: attempt $mlsup_taken ended with status $mlsup_status; waiting up to @WAIT@ s for the next" >&2
      mlsup_failed_at=$(date +%s)
    fi
    if [ -n "$mlsup_failed_at" ] && [ $(($(date +%s) - mlsup_failed_at)) -ge @WAIT@ ]; then exit "$mlsup_status"; fi
    sleep 0.2
  done
fi
)SH";

}  // namespace

std::string spare_values(const config::Config& config, const Attempt& attempt, unsigned long long job,
                         const std::vector<std::string>& nodes) {
  std::string out = attempt.number == 0 ? "export MLSUP_ATTEMPT=0\n" : chain_values(config, attempt);
  out += "export MLSUP_STEP_NODES=" + util::shell_quote(util::join(nodes, ",")) + "\n";
  out += "export MLSUP_FOR_JOB=" + std::to_string(job) + "\n";
  return out;
}

std::string spare_preamble(const config::Config& config, int nnodes, int tasks_per_node, const std::string& shell) {
  std::string text(kPreamble);
  std::string signal = config.slurm.signal;
  if (util::starts_with(signal, "SIG")) signal = signal.substr(3);
  util::replace_all(text, "@DIR@", util::shell_quote(config.dir().spares()));
  util::replace_all(text, "@FENCED@", util::shell_quote(config.dir().fenced()));
  util::replace_all(text, "@NNODES@", std::to_string(nnodes));
  util::replace_all(text, "@TPN@", std::to_string(tasks_per_node));
  util::replace_all(text, "@NTASKS@", std::to_string(nnodes * tasks_per_node));
  util::replace_all(text, "@WAIT@", std::to_string(kHandoverWaitSeconds));
  util::replace_all(text, "@SIGNAL@", signal);
  util::replace_all(text, "@NO_RETRY@", std::to_string(config.policy.no_retry_exit_code));
  util::replace_all(text, "@FAILED@", std::to_string(kClaimFailedExit));
  util::replace_all(text, "@SHELL@", shell);
  return text;
}

std::optional<SpareClaim> parse_spare_claim(const std::string& text) {
  if (text.empty() || text.back() != '\n') return std::nullopt;
  const auto line = util::trim(text);
  const auto space = line.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  SpareClaim c;
  const auto id = line.substr(0, space);
  if (std::from_chars(id.data(), id.data() + id.size(), c.job_id).ec != std::errc() || c.job_id == 0) return std::nullopt;
  for (const auto& n : util::split(std::string(util::trim(line.substr(space + 1))), ','))
    if (!n.empty()) c.nodes.push_back(n);
  if (c.nodes.empty()) return std::nullopt;
  return c;
}

}  // namespace mlsup::render
