#pragma once
// `mlsup run` and `mlsup tick` over one or many campaigns: each campaign with its own lease, state
// directory and journal, all asking Slurm for their jobs with one query per pass, each campaign's
// passes on a worker of its own so that one campaign's slow call never delays another's pass.
#include <string>
#include <vector>

#include "config/config.h"

namespace mlsup::engine {

struct RunResult {
  int exit_code = 0;
  std::string reason;  // the last line mlsup prints
};

// What run and tick supervise, and how.
struct Supervise {
  std::vector<std::string> sources;  // config files and folders
  double submit_rate = 2;            // sbatch calls per second at most, over all campaigns (after a burst)
  int submit_burst = 4;              // sbatch calls that may go at once
};

// The config files that sources name: a file as given; a folder stands for the *.yaml and *.yml
// files directly inside it (sorted; other files and subfolders are not looked at). A source that is
// neither (or a folder without configs) is listed in problems.
std::vector<std::string> config_files(const std::vector<std::string>& sources, std::vector<std::string>& problems);

// Supervises every campaign the sources name until each has ended, or until SIGTERM/SIGINT (jobs
// keep running). A config with errors is reported and left out; a campaign another supervisor holds
// is reported and tried again each pass while others run. SIGHUP reads the sources again: a new
// config joins, a removed one is let go (its jobs go on), a changed one is reloaded (a bad one
// keeps the one in use). sbatch calls of all campaigns are spaced out at the submit rate, so that
// many campaigns ending at once do not fire as many sbatch in one second. Exit code: one campaign's
// own; with several, the most severe of theirs.
RunResult run(const Supervise& what);

// One reconcile pass of every campaign the sources name, side by side, for cron. A campaign another
// supervisor acts on is left to it.
RunResult tick(const Supervise& what);

}  // namespace mlsup::engine
