#pragma once
// `mlsup check`: the dead-man, for monitoring systems (Nagios, Icinga, ...). Its exit code follows the
// monitoring-plugin convention (0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN), not mlsup's own table.
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "views/check.h"

namespace mlsup::cli {

struct CheckOptions {
  std::vector<std::string> sources;
  std::string stale_after;  // --stale-after: a duration without a supervisor's pass that warns (twice it: critical); "" = default
  engine::DiskLimits disk;
};

// The exit code of a command line check cannot read: UNKNOWN, as monitoring systems expect.
inline constexpr int kCheckUsage = static_cast<int>(engine::Severity::Unknown);

// The codes check exits with, for --help's footer.
inline constexpr const char* kCheckCodesHelp =
    "check alone exits with the monitoring-plugin codes instead: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN.\n";

// Adds `check` and its options to the command line, filling o.
CLI::App* add_check_command(CLI::App& app, CheckOptions& o);

// The default of --stale-after for the campaign: 10 minutes, or its lease_ttl when that is longer.
double default_stale_after(double lease_ttl_seconds);

// `mlsup check SOURCES...`: the campaigns' conditions in one status line on stdout; the exit code is
// its severity.
int check_verb(const CheckOptions& options);

}  // namespace mlsup::cli
