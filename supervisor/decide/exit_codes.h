#pragma once
// mlsup's exit codes, each once: the policy's stop codes, the supervisor's own, the command line's.
// `--help` prints this table and a test holds README's table to it.
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mlsup::decide {

enum ExitCode : int {
  kCompleted = 0,
  kRuntimeFailure = 1,
  kUsage = 2,
  kBadInput = 3,
  kLeaseHeld = 5,
  kDetached = 6,
  kStoppedBySwitch = 10,
  kBudgetSpent = 11,
  kCancelledByPerson = 12,
  kNoRetry = 13,
  kCannotGoOn = 14,
  kEndUnknown = 15,
  kCancelled = 16,
  kNotStopped = 17,
  kAlreadyEnded = 18,
  kNotExcluded = 19,
};

struct ExitCodeRow {
  ExitCode code;
  std::string_view meaning;  // one line, for --help and README
  int severity;              // several campaigns' codes combine to the one of highest severity
};

// Every exit code with its meaning, in increasing order.
std::span<const ExitCodeRow> exit_codes();

// The codes from the least severe to the most (how several campaigns' codes combine).
std::vector<int> by_severity();

// The most severe of codes (0 for none).
int most_severe(std::span<const int> codes);

// The table as --help prints it: "  <code>  <meaning>" lines.
std::string exit_code_help();

}  // namespace mlsup::decide
