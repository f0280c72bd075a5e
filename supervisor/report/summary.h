#pragma once
// The report in one line (pure), for the notification channels: the window, then each run's state, attempts,
// failures, steps gained, time lost and goodput.
#include <string>

#include "report/facts.h"

namespace mlsup::report {

// "2026-12-02T20:00:00Z to 2026-12-03T08:00:00Z: a completed (2 attempts, 1 failure, 12 steps gained, 1.5 s
// lost, goodput 88.9%); b not started: waiting after a (running)".
std::string summary_line(const Report& r);

}  // namespace mlsup::report
