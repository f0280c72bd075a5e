#pragma once
// The report as Markdown (pure): a heading with the window, then three tables a program can parse (runs,
// attempts, exclusions: a header row, a separator row, one row per item, none when there is none; times
// ISO 8601 in UTC, durations in seconds), each under a heading of its own.
#include <string>

#include "report/facts.h"

namespace mlsup::report {

// The columns of each table, in order (README.md, "The morning report", describes them).
inline constexpr const char* kRunColumns[] = {"run", "state", "attempts", "failures", "steps gained", "recomputed",
                                              "lost s", "goodput", "now"};
inline constexpr const char* kAttemptColumns[] = {"run", "attempt", "job", "nodes", "start", "end", "ending", "action",
                                                  "from step", "to step", "kept", "lost s"};
inline constexpr const char* kExclusionColumns[] = {"run", "node", "attempt", "since", "until", "reason"};

std::string render_markdown(const Report& r);

}  // namespace mlsup::report
