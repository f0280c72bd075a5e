#pragma once
// What one pass saw outside the journal. observe.cpp fills it, each source read at most once and
// only when needs() (reconcile/reconcile.h) says this pass's decisions use it; reconcile decides from it.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "checkpoint/checkpoints.h"
#include "decide/chain_tasks.h"
#include "decide/disk.h"
#include "decide/runway.h"
#include "state/memory.h"
#include "observe/node_records.h"
#include "render/spares.h"
#include "slurm_model/accounting.h"
#include "slurm_model/srun_messages.h"
#include "slurm_model/types.h"

namespace mlsup::engine {

using JobsAnswer = slurm::Result<std::vector<slurm::Job>>;

// What a finished job left about its nodes besides Slurm's node states.
struct EndingOutput {
  std::optional<slurm::FirstEnd> srun_first;   // srun's first report of a task's abnormal end, and its victims
  observe::NodeRecords records;                // the SPANK plugin's per-node records
  std::string tail;                            // the output's last bytes read (the error file's first), for the evidence rules
  std::vector<std::string> rank_nodes;         // rank -> node, as the helper's files say ([] when none)
};

// The campaign's window at a pass: open or not, and when that changes next (UTC seconds).
struct WindowNow {
  bool open = true;
  std::int64_t changes_at = 0;
};

struct World {
  Clocks now;
  bool kill_switch = false;                    // the kill switch file exists
  bool kill_switch_ours = false;               // ... and says mlsup set it (a pause --now, a cancel, the window), not a person's stop
  std::optional<std::string> template_text;    // what a submission renders from; nullopt: nothing renders
  int template_nodes = 1;                      // the node count of its job
  bool template_read = false;                  // template_text was looked for this pass
  std::optional<JobsAnswer> jobs;              // the current attempt's job (in chain mode: its array)
  std::optional<JobsAnswer> by_tag;            // the jobs carrying the current attempt's tag
  std::optional<JobsAnswer> chain;             // the previous attempt's array (spare nodes: its job), before the next attempt
  std::optional<std::map<std::string, std::string>> heartbeat;  // the watched attempt's heartbeat files
  double heartbeat_written_at = 0;  // unix seconds: the newest write time among them (0: none read)
  std::optional<checkpoint::Scan> checkpoints;
  std::string handed;                          // chain mode: next.env's text, read with the checkpoints ("" = none)
  std::optional<slurm::Result<std::vector<slurm::Node>>> nodes;
  std::optional<EndingOutput> ending;          // read once the watched job has ended
  std::optional<decide::DiskUse> disk;                 // the checkpoint folder's file system, when it was looked at
  std::optional<decide::RunwayInputs> runway;          // and what its runway is worked out from, looked at with it
  std::string runway_sized;                            // the checkpoint whose size runway holds ("" = none)
  std::optional<Claim> claim;                  // chain mode: the task that claimed the attempt
  bool claim_read = false;
  std::optional<render::SpareClaim> spare_claim;  // spare nodes: the job's claim of the attempt
  std::optional<int> spare_end;                // spare nodes: the exit status of the attempt's run in the job
  bool spare_read = false;
  // Accounting's records: of the watched job once the controller has forgotten it, or (no job yet,
  // after an sbatch of unknown outcome) of the jobs carrying the attempt's tag.
  std::optional<slurm::Result<slurm::Accounting>> accounting;
  std::optional<std::string> end_record;       // the forgotten job's end record, as its script wrote it
  std::vector<std::string> started_signs;      // files a forgotten job left that show it started (its output, heartbeats)
  bool end_record_read = false;
  std::optional<WindowNow> window;             // nullopt: the campaign has no window
  std::optional<JobsAnswer> tagged;            // every job carrying one of the campaign's tags (duplicates)
  // An earlier supervisor's sbatch for the open submission: whether it still runs (nullopt: it ran on
  // another host or boot, where this one cannot look), and the file server's clock then.
  std::optional<bool> sbatch_running;
  std::optional<double> server_now;
  bool sbatch_read = false;
};

// The sources a pass reads (observe.cpp reads those not yet in the world).
struct Needs {
  bool jobs = false, by_tag = false, chain = false, template_text = false, checkpoints = false, nodes = false,
       heartbeat = false, ending = false, claim = false, accounting = false, end_record = false, spare = false,
       tagged = false, sbatch = false;
};

}  // namespace mlsup::engine
