#include "decide/exit_codes.h"

#include <array>

namespace mlsup::decide {
namespace {

constexpr std::array<ExitCodeRow, 11> kRows = {{
    {kCompleted, "done; for run and tick: the campaign completed (tick: or goes on)"},
    {kRuntimeFailure, "a runtime failure (a file could not be written, the state directory is unusable, ...)"},
    {kUsage, "the command line is wrong"},
    {kBadInput, "the config or the template is wrong (the message says file:line:column: key: what to do)"},
    {kLeaseHeld, "run: another supervisor acts on this campaign (or took it over)"},
    {kDetached, "run: stopped supervising on SIGTERM/SIGINT; the jobs keep running"},
    {kStoppedBySwitch, "the campaign stopped: the kill switch"},
    {kBudgetSpent, "the campaign stopped: a restart budget is spent, or a crash loop"},
    {kCancelledByPerson, "the campaign stopped: its job was cancelled by a person"},
    {kNoRetry, "the campaign stopped: the training exited with the do-not-retry code"},
    {kCannotGoOn,
     "the campaign stopped: it cannot go on (Slurm refused the job, or kept refusing it for policy.submit_retry_for; "
     "deadline)"},
}};

}  // namespace

std::span<const ExitCodeRow> exit_codes() { return kRows; }

std::string exit_code_help() {
  std::string out;
  for (const auto& row : kRows) {
    const std::string code = std::to_string(static_cast<int>(row.code));
    out += "  " + code + std::string(4 - code.size(), ' ') + std::string(row.meaning) + "\n";
  }
  return out;
}

}  // namespace mlsup::decide
