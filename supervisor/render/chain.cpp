#include "render/chain.h"

#include "util/strings.h"

namespace mlsup::render {
namespace {

// The preamble; @DIR@, @WAIT_TICKS@ and @HEARTBEAT_DIR@ are filled in (shell-quoted where paths).
constexpr std::string_view kPreamble = R"SH(# mlsup chain mode: this task runs the attempt mlsup prepared last, with the values current now.
mlsup_take_attempt() {
  mlsup_chain=@DIR@
  mlsup_ticks=@WAIT_TICKS@
  mkdir -p "$mlsup_chain/claims" 2>/dev/null
  while :; do
    if [ -r "$mlsup_chain/next.env" ]; then
      . "$mlsup_chain/next.env"
      for mlsup_node in $(scontrol show hostnames "${SLURM_JOB_NODELIST:-}" 2>/dev/null); do
        case ",$MLSUP_EXCLUDE," in *",$mlsup_node,"*)
          echo "mlsup: node $mlsup_node is excluded from attempt $MLSUP_ATTEMPT; this task leaves it to the next" >&2
          exit 0 ;;
        esac
      done
      if mkdir "$mlsup_chain/claims/$MLSUP_ATTEMPT" 2>/dev/null; then mlsup_how=prepared; break; fi
    fi
    if [ "$mlsup_ticks" -le 0 ]; then
      # mlsup prepared nothing new in time: the next free attempt, with the last values it wrote.
      MLSUP_ATTEMPT=$(( ${MLSUP_ATTEMPT:-0} + 1 ))
      until mkdir "$mlsup_chain/claims/$MLSUP_ATTEMPT" 2>/dev/null; do
        [ -d "$mlsup_chain/claims" ] || { echo "mlsup: cannot claim an attempt in $mlsup_chain" >&2; exit 1; }
        MLSUP_ATTEMPT=$((MLSUP_ATTEMPT + 1))
      done
      MLSUP_HEARTBEAT_FILE=@HEARTBEAT_DIR@/attempt-$MLSUP_ATTEMPT
      MLSUP_ATTEMPT_HEARTBEAT_FILE=$MLSUP_HEARTBEAT_FILE
      export MLSUP_ATTEMPT MLSUP_HEARTBEAT_FILE MLSUP_ATTEMPT_HEARTBEAT_FILE
      mlsup_how=fallback
      break
    fi
    mlsup_ticks=$((mlsup_ticks - 1))
    sleep 0.2
  done
  printf '%s %s %s %s\n' "${SLURM_JOB_ID:-0}" "${SLURM_ARRAY_TASK_ID:-}" "$mlsup_how" "$MLSUP_RESUME_FROM" \
    > "$mlsup_chain/claims/$MLSUP_ATTEMPT/task.tmp" &&
    mv "$mlsup_chain/claims/$MLSUP_ATTEMPT/task.tmp" "$mlsup_chain/claims/$MLSUP_ATTEMPT/task"
  echo "mlsup: task ${SLURM_ARRAY_TASK_ID:-?} runs attempt $MLSUP_ATTEMPT ($mlsup_how values)" >&2
}
mlsup_take_attempt
)SH";

void fill(std::string& text, std::string_view name, const std::string& value) {
  for (auto at = text.find(name); at != std::string::npos; at = text.find(name, at + value.size()))
    text.replace(at, name.size(), value);
}

bool header_line(std::string_view line) {
  const auto t = util::trim(line);
  return t.empty() || t.front() == '#';
}

}  // namespace

std::string chain_dir(const config::Config& config) { return config.state_dir + "/chain"; }

std::string chain_values(const config::Config& config, const Attempt& attempt) {
  auto env = job_environment(config, attempt);
  env.emplace_back(kPluginHeartbeatBase, heartbeat_file(config, attempt.number));
  std::string out;
  for (const auto& [name, value] : env) out += "export " + name + "=" + util::shell_quote(value) + "\n";
  return out;
}

std::string chain_preamble(const config::Config& config) {
  std::string text(kPreamble);
  fill(text, "@DIR@", util::shell_quote(chain_dir(config)));
  fill(text, "@WAIT_TICKS@", std::to_string(config.slurm.chain_start_wait.count() * 5));
  fill(text, "@HEARTBEAT_DIR@", util::shell_quote(config.heartbeat.dir));
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
