#include "render/end_record.h"

#include <array>

#include "util/strings.h"

namespace mlsup::render {
namespace {

// @DIR@ is the quoted folder. A signal's trap writes first, since dash runs no EXIT trap on a signal,
// then ends the shell by the same signal, so that Slurm sees what it would have without the trap.
constexpr std::string_view kLines = R"lines(# mlsup: how this script ends (exit status, ending signal), for when Slurm has forgotten the job
mlsup_end_record() {
  [ -n "${SLURM_JOB_ID:-}" ] && [ -z "${MLSUP_STEP_BODY:-}" ] || return 0  # a spare-node job's run: its loop records
  mkdir -p @DIR@ 2>/dev/null
  { printf 'exit_code=%s\nsignal=%s\nslurm=%s\n' "$1" "$2" "${3:-}" >@DIR@/."$SLURM_JOB_ID.$$" && mv -f @DIR@/."$SLURM_JOB_ID.$$" @DIR@/"$SLURM_JOB_ID"; } 2>/dev/null
}
# What Slurm says of the job as SIGTERM comes (a time limit, a preemption, a cancel look alike inside).
mlsup_slurm_said() {
  command -v timeout >/dev/null 2>&1 && command -v scontrol >/dev/null 2>&1 || return 0
  timeout 5 scontrol -o show job "$SLURM_JOB_ID" 2>/dev/null | head -n 1
}
trap 'mlsup_end_record $? 0' EXIT
trap 'mlsup_end_record 0 15; mlsup_end_record 0 15 "$(mlsup_slurm_said)"; trap - EXIT TERM; kill -TERM $$' TERM
trap 'mlsup_end_record 0 2; trap - EXIT INT; kill -INT $$' INT
trap 'mlsup_end_record 0 1; trap - EXIT HUP; kill -HUP $$' HUP
)lines";

constexpr std::array<std::string_view, 5> kShells{"sh", "bash", "dash", "ksh", "zsh"};

std::string_view base_name(std::string_view path) {
  const auto slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

}  // namespace

std::string end_record_lines(const config::Config& config) {
  std::string text(kLines);
  const std::string dir = util::shell_quote(config.dir().ends());
  util::replace_all(text, "@DIR@", dir);
  return text;
}

bool shell_script(std::string_view script) {
  if (!util::starts_with(script, "#!")) return false;
  const auto words = util::split(std::string(util::trim(script.substr(2, script.find('\n') - 2))), ' ');
  std::vector<std::string_view> w;
  for (const auto& x : words)
    if (!x.empty()) w.push_back(x);
  if (w.empty()) return false;
  std::string_view program = base_name(w[0]);
  if (program == "env" && w.size() > 1) program = base_name(w[1]);
  for (auto shell : kShells)
    if (program == shell) return true;
  return false;
}

}  // namespace mlsup::render
