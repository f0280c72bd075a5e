#include "decide/exit_codes.h"

#include <algorithm>
#include <array>

namespace mlsup::decide {
namespace {

constexpr std::array<ExitCodeRow, 16> kRows = {{
    {kCompleted, "done; for run and tick: the campaign completed (tick: or goes on)", 0},
    {kRuntimeFailure, "a runtime failure (a file could not be written, the state directory is unusable, ...)", 11},
    {kUsage, "the command line is wrong", 12},
    {kBadInput, "the config or the template is wrong (the message says file:line:column: key: what to do)", 10},
    {kLeaseHeld, "run: another supervisor acts on this campaign (or took it over)", 2},
    {kDetached, "run, tick: stopped supervising on SIGTERM/SIGINT (a tick once its passes under way ended); the jobs keep running", 1},
    {kStoppedBySwitch, "the campaign stopped: the kill switch", 3},
    {kBudgetSpent, "the campaign stopped: a restart budget is spent, or a crash loop", 7},
    {kCancelledByPerson, "the campaign stopped: its job was cancelled by a person", 6},
    {kNoRetry,
     "the campaign stopped: the training exited with the do-not-retry code, or its output shows a failure another "
     "attempt would repeat (an evidence rule's stop)",
     5},
    {kCannotGoOn,
     "the campaign stopped: it cannot go on (Slurm refused the job, or kept refusing it for policy.submit_retry_for; "
     "deadline)", 8},
    {kEndUnknown,
     "the campaign stopped: its job's end is unknown (Slurm forgot the job and no source recorded its end); a person "
     "decides whether it goes on (`mlsup resume` continues it)", 9},
    {kCancelled, "the campaign stopped: cancelled with `mlsup cancel`", 4},
    {kNotStopped,
     "resume: the campaign is neither stopped nor paused (it runs, has not started, or completed); nothing was changed",
     13},
    {kAlreadyEnded,
     "pause or cancel: the campaign has already ended (completed, stopped or cancelled); nothing was changed", 14},
    {kNotExcluded, "unexclude: the node is not excluded now (the message names the live exclusions); nothing was changed",
     15},
}};

}  // namespace

std::span<const ExitCodeRow> exit_codes() { return kRows; }

std::vector<int> by_severity() {
  std::vector<const ExitCodeRow*> rows;
  for (const auto& row : kRows) rows.push_back(&row);
  std::sort(rows.begin(), rows.end(), [](const ExitCodeRow* a, const ExitCodeRow* b) { return a->severity < b->severity; });
  std::vector<int> out;
  for (const auto* row : rows) out.push_back(static_cast<int>(row->code));
  return out;
}

int most_severe(std::span<const int> codes) {
  const auto rank = [](int code) {
    for (const auto& row : kRows)
      if (static_cast<int>(row.code) == code) return row.severity;
    return static_cast<int>(kRows.size());  // a code outside the table outranks them all
  };
  int worst = 0;
  for (int code : codes)
    if (rank(code) > rank(worst)) worst = code;
  return worst;
}

std::string exit_code_help() {
  std::string out;
  for (const auto& row : kRows) {
    const std::string code = std::to_string(static_cast<int>(row.code));
    out += "  " + code + std::string(4 - code.size(), ' ') + std::string(row.meaning) + "\n";
  }
  return out;
}

}  // namespace mlsup::decide
