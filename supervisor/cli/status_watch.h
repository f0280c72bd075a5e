#pragma once
// `mlsup status --watch`: status refreshed in place every second on a terminal (a line per change
// otherwise), with the heartbeat read from its files each time, so it is live also when no supervisor
// runs, and the jobs' states asked of Slurm at most every 5 s.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"

namespace mlsup::cli {

struct WatchOptions {
  double every = 1;         // seconds between two refreshes
  double slurm_every = 5;   // seconds between two questions to Slurm, at least
  std::optional<int> refreshes;  // stop after this many (tests); none: until SIGINT or SIGTERM
};

// What the heartbeat files of the attempt say now: the highest step written and the age of the newest
// write (a file per task with the SPANK plugin); nullopt when the attempt has none yet.
struct LiveHeartbeat {
  long long step = 0;
  double age = 0;
  int files = 0;
};
std::optional<LiveHeartbeat> live_heartbeat(const config::Config& c, int attempt, double now);

// The live line under a campaign's status: "live: step 120 written 2s ago (1 heartbeat file); Slurm: job
// 42 RUNNING on n[1-2], asked 3s ago" (job: Slurm's answer for the attempt's job, null when not asked).
std::string live_line(const std::optional<LiveHeartbeat>& hb, const nlohmann::json& job, double asked_ago);

// Refreshes the status of the campaigns the sources name until interrupted; 0, or 3 for a config with errors.
int status_watch(const std::vector<std::string>& sources, const WatchOptions& options);

}  // namespace mlsup::cli
