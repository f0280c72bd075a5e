#pragma once
// The command line's exit codes, from the one table (decide/exit_codes.h).
#include "decide/exit_codes.h"

namespace mlsup::cli {

inline constexpr int kOk = decide::kCompleted;  // done: the command did what was asked
using decide::kBadInput;
using decide::kRuntimeFailure;
using decide::kUsage;

}  // namespace mlsup::cli
