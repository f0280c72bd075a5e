#include "render/chain.h"

#include "util/strings.h"

namespace mlsup::render {
namespace {

// The preamble; @DIR@, @WAIT_TICKS@, @HEARTBEAT_DIR@, @FAILED@, @STRANDED@ and @TRIES@ are filled in
// (shell-quoted where paths). It works in sh and bash, also under a `set -e` of the script's #! line.
constexpr std::string_view kPreamble = R"SH(# mlsup chain mode: this task runs the attempt mlsup prepared last, with the values current now.
# Exits before the script's own lines: 0 when a node of this task is excluded from the attempt (the
# next task takes it), @FAILED@ when the file system refuses the claim.
mlsup_fail() {
  echo "mlsup: task ${SLURM_ARRAY_TASK_ID:-?} cannot claim an attempt: $*" >&2
  exit @FAILED@
}
# mlsup_claim N: true once this task holds attempt N; else mlsup_held says who does: "task" (one that
# recorded itself) or "new" (a claim made moments ago). A claim without its task file older than
# @STRANDED@ s is stranded: the one task that makes N.takeover renames it away and takes it over (two
# that judged it stale at once would otherwise each rename away the other's fresh claim).
mlsup_claim() {
  mlsup_at=$mlsup_chain/claims/$1
  mlsup_err=$(mkdir "$mlsup_at" 2>&1) && return 0
  # gone since: another task's takeover renamed it away just now; one more try tells
  [ -d "$mlsup_at" ] || { mlsup_err=$(mkdir "$mlsup_at" 2>&1) && return 0; }
  [ -d "$mlsup_at" ] || mlsup_fail "$mlsup_err"
  mlsup_held=task
  [ -e "$mlsup_at/task" ] && return 1
  mlsup_held=new
  mlsup_age=$(( $(date +%s) - $(stat -c %Y "$mlsup_at" 2>/dev/null || date +%s) ))
  [ "$mlsup_age" -ge @STRANDED@ ] && mkdir "$mlsup_at.takeover" 2>/dev/null || return 1
  [ -e "$mlsup_at/task" ] && return 1
  mv "$mlsup_at" "$mlsup_at.stranded.${SLURM_JOB_ID:-0}.$$" 2>/dev/null || return 1
  echo "mlsup: attempt $1 was claimed ${mlsup_age}s ago by a task that never recorded itself; this task takes it over" >&2
  mlsup_err=$(mkdir "$mlsup_at" 2>&1) && return 0
  [ -d "$mlsup_at" ] || mlsup_fail "$mlsup_err"
  return 1
}
# mlsup prepared nothing new in time: the first attempt from the last one it prepared that no task
# holds, with the last values it wrote; a claim being made is waited for.
mlsup_fallback() {
  MLSUP_ATTEMPT=${MLSUP_ATTEMPT:-1}
  mlsup_tries=0
  until mlsup_claim "$MLSUP_ATTEMPT"; do
    mlsup_tries=$((mlsup_tries + 1))
    [ "$mlsup_tries" -lt @TRIES@ ] || mlsup_fail "no attempt free in $mlsup_tries tries (up to $MLSUP_ATTEMPT)"
    if [ "$mlsup_held" = task ]; then MLSUP_ATTEMPT=$((MLSUP_ATTEMPT + 1)); else sleep 1; fi
  done
  MLSUP_HEARTBEAT_FILE=@HEARTBEAT_DIR@/attempt-$MLSUP_ATTEMPT
  MLSUP_ATTEMPT_HEARTBEAT_FILE=$MLSUP_HEARTBEAT_FILE
  export MLSUP_ATTEMPT MLSUP_HEARTBEAT_FILE MLSUP_ATTEMPT_HEARTBEAT_FILE
}
# The claim names its task, so that mlsup watches it; a claim that cannot say so is given up.
mlsup_record() {
  mlsup_at=$mlsup_chain/claims/$MLSUP_ATTEMPT
  mlsup_err=$({ printf '%s %s %s %s\n' "${SLURM_JOB_ID:-0}" "${SLURM_ARRAY_TASK_ID:-}" "$mlsup_how" "$MLSUP_RESUME_FROM" \
    > "$mlsup_at/task.tmp" && mv "$mlsup_at/task.tmp" "$mlsup_at/task"; } 2>&1) && return 0
  rm -f "$mlsup_at/task.tmp" 2>/dev/null || :
  rmdir "$mlsup_at" 2>/dev/null || :
  mlsup_fail "writing $mlsup_at/task failed, so attempt $MLSUP_ATTEMPT is left to another task: $mlsup_err"
}
mlsup_take_attempt() {
  mlsup_chain=@DIR@
  mlsup_ticks=@WAIT_TICKS@
  mlsup_prepared=
  mlsup_err=$(mkdir -p "$mlsup_chain/claims" 2>&1) || mlsup_fail "$mlsup_err"
  while :; do
    if [ -r "$mlsup_chain/next.env" ]; then
      . "$mlsup_chain/next.env"
      mlsup_prepared=$MLSUP_ATTEMPT
      for mlsup_node in $(scontrol show hostnames "${SLURM_JOB_NODELIST:-}" 2>/dev/null); do
        case ",$MLSUP_EXCLUDE," in *",$mlsup_node,"*)
          echo "mlsup: node $mlsup_node is excluded from attempt $MLSUP_ATTEMPT; this task leaves it to the next" >&2
          exit 0 ;;
        esac
      done
      if mlsup_claim "$MLSUP_ATTEMPT"; then break; fi
    fi
    if [ "$mlsup_ticks" -le 0 ]; then mlsup_fallback; break; fi
    mlsup_ticks=$((mlsup_ticks - 1))
    sleep 0.2
  done
  mlsup_how=fallback
  [ "$MLSUP_ATTEMPT" = "$mlsup_prepared" ] && mlsup_how=prepared
  mlsup_record
  echo "mlsup: task ${SLURM_ARRAY_TASK_ID:-?} runs attempt $MLSUP_ATTEMPT ($mlsup_how values)" >&2
}
mlsup_take_attempt
)SH";

bool header_line(std::string_view line) {
  const auto t = util::trim(line);
  return t.empty() || t.front() == '#';
}

}  // namespace

std::string chain_values(const config::Config& config, const Attempt& attempt) {
  auto env = job_environment(config, attempt);
  env.emplace_back(kPluginHeartbeatBase, heartbeat_file(config, attempt.number));
  // What an earlier attempt's values added for debugging goes first (a spare-node job sources one after another).
  std::string out = std::string("if [ -n \"${") + kDebugEnvNames + ":-}\" ]; then unset $" + kDebugEnvNames + "; fi\n";
  for (const auto& [name, value] : env) out += "export " + name + "=" + util::shell_quote(value) + "\n";
  return out;
}

std::string chain_preamble(const config::Config& config) {
  std::string text(kPreamble);
  util::replace_all(text, "@DIR@", util::shell_quote(config.dir().chain()));
  util::replace_all(text, "@WAIT_TICKS@", std::to_string(config.slurm.chain_start_wait.count() * 5));
  util::replace_all(text, "@HEARTBEAT_DIR@", util::shell_quote(config.heartbeat.dir));
  util::replace_all(text, "@FAILED@", std::to_string(kClaimFailedExit));
  util::replace_all(text, "@STRANDED@", std::to_string(kStrandedClaimSeconds));
  util::replace_all(text, "@TRIES@", std::to_string(kClaimTries));
  return text;
}

std::string insert_after_header(std::string_view script, std::string_view lines) {
  std::size_t at = 0;
  while (at < script.size()) {
    const auto end = script.find('\n', at);
    const auto line = script.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at);
    if (!header_line(line)) break;
    at = end == std::string_view::npos ? script.size() : end + 1;
  }
  std::string out(script.substr(0, at));
  if (!out.empty() && out.back() != '\n') out += '\n';
  out += lines;
  out += script.substr(at);
  return out;
}

}  // namespace mlsup::render
