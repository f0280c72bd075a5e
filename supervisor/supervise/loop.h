#pragma once
// `mlsup run` and `mlsup tick` over one or many campaigns: each campaign with its own lease, state
// directory and journal, all asking Slurm for their jobs with one query per pass, each campaign's
// passes on a worker of its own so that one campaign's slow call never delays another's pass.
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "config/config.h"
#include "state/lifecycle.h"
#include "state/memory.h"

namespace mlsup::engine {

struct RunResult {
  int exit_code = 0;
  std::string reason;  // the last line mlsup prints
  bool quiet = false;  // tick: nothing was decided and nothing went wrong in it, so nothing is printed
};

// A supervisor's own figures for its metrics: its campaigns' passes and its calls to Slurm.
struct PassFigures {
  struct Passes {
    long long count = 0;
    double seconds = 0;  // their time, in all
  };
  std::map<std::string, Passes> by_campaign;     // by the campaign's name
  long long rounds = 0;                          // supervisor passes (rounds) begun
  long long slurm_queries = 0;                   // job queries sent to Slurm
  std::map<std::string, long long> slurm_errors; // failed calls to Slurm, by error kind's name
};

// The Prometheus text of the campaigns configs and the figures (cli/metrics_text.h through status --json's view).
using MetricsText = std::function<std::string(const std::vector<config::Config>&, const PassFigures&)>;

// Where run and tick put their metrics.
struct MetricsOut {
  std::string listen;    // run: serve GET /metrics on this host:port ("" = not served)
  std::string textfile;  // the node_exporter textfile collector's file, replaced whole ("" = none)
  double every = 10;     // run: seconds between two expositions at least
  MetricsText text;      // builds the exposition (set by the command line)
  bool wanted() const { return text && (!listen.empty() || !textfile.empty()); }
};

// What run and tick supervise, and how.
struct Supervise {
  std::vector<std::string> sources;  // config files and folders
  double submit_rate = 2;            // sbatch calls per second at most, over all campaigns (after a burst)
  int submit_burst = 4;              // sbatch calls that may go at once
  MetricsOut metrics;
  bool standby = false;              // run: a campaign another supervisor holds is waited for, not given up (exit 5)
};

// The config files that sources name: a file as given; a folder stands for the *.yaml and *.yml
// files directly inside it (sorted; other files and subfolders are not looked at); a campaign set
// stands for each of its runs, as SET:RUN (config::load_config_file loads one). A source that is
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

// This host's clocks now, as a pass reads them (status re-bases a campaign's memory on them).
Clocks clocks_now();

// One reconcile pass of every campaign the sources name, side by side, for cron. A campaign another
// supervisor acts on is left to it; a run of a campaign set is passed only once its set's gate lets
// it start (decide/set_gate.h). Quiet when no event was printed, no config had errors, and every
// campaign went on, waited, or had ended before this tick.
RunResult tick(const Supervise& what);

// A lifecycle verb's request r, already in the requests folder, carried out by the verb itself
// (supervise/loop_request.cpp): the campaign's lease taken as `tick` takes it, the request journaled,
// then for a pause one pass, for a cancel passes until its job is gone. kLeaseHeld when a supervisor
// holds the campaign (it carries the request out); the campaign's outcome when it ended.
RunResult carry_out(const config::Config& c, const Request& r);

}  // namespace mlsup::engine
