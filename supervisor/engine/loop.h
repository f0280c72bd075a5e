#pragma once
// `mlsup run` and `mlsup tick`: the lease that makes one supervisor act at a time, and the event
// loop that runs reconcile passes on a worker thread so that no blocking call touches the loop.
#include <string>

#include "config/config.h"

namespace mlsup::engine {

struct RunResult {
  int exit_code = 0;
  std::string reason;  // the last line mlsup prints
};

// Supervises until the campaign ends, or until SIGTERM/SIGINT (jobs keep running). SIGHUP reloads
// the config file (a bad one keeps the old). backend: "auto", "libslurm" or "cli".
RunResult run(const config::Config& config);

// One reconcile pass, for cron. Another supervisor acting on the campaign makes it a no-op.
RunResult tick(const config::Config& config);

}  // namespace mlsup::engine
