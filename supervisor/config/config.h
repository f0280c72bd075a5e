#pragma once
// A campaign's configuration, as loaded and validated from YAML. Plain values; no behaviour.
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "config/alert_kinds.h"
#include "config/array_spec.h"
#include "config/duration.h"
#include "config/evidence_rule.h"
#include "config/state_dir.h"

namespace mlsup::config {

// A duration, or "auto": mlsup sizes it from what it measured, and `value` holds until it has.
struct AutoSeconds {
  Seconds value{0};
  bool automatic = false;
  bool operator==(const AutoSeconds&) const = default;
};

struct SlurmSettings {
  std::string partition;  // "" when the config leaves it to the script or the cluster
  std::optional<int> nodes, ntasks_per_node, gpus_per_node, cpus_per_task;
  std::string time;                   // Slurm time text as written; "" when not set
  std::optional<Seconds> time_limit;  // parsed time; nullopt when unset or unlimited
  std::string signal = "USR1";        // pre-timeout signal sent to the batch shell
  AutoSeconds signal_lead{Seconds{300}};  // how long before the time limit it is sent (auto: from the measured pace)
  std::string array;                  // array spec text; "" for one job per attempt
  std::optional<ArraySpec> array_spec;
  Seconds chain_start_wait{60};         // a chain task waits this long at its start for its attempt's values
  int spare_nodes = 0;                  // nodes the job holds beyond the training's, to restart on inside it
  std::vector<std::string> extra_args;  // more sbatch options, passed as they are
  std::string backend = "auto";         // how mlsup talks to Slurm: auto | libslurm | cli
};

struct CheckpointSettings {
  std::string dir;                    // absolute
  std::string layout = "glob";        // megatron | deepspeed | hf | glob
  std::string glob = "*";             // entries of dir considered checkpoints (glob layout)
  std::string step_regex = "(\\d+)$";  // the step number in an entry's name (glob layout)
  std::string complete_marker;        // file that must exist inside a complete checkpoint; "" = none
  int keep = 0;                       // retention: complete checkpoints kept; 0 keeps all
  int fallback_after = 2;             // attempts in a row failing before a step from one checkpoint quarantine it; 0 = never
  int max_quarantined = 2;            // checkpoints quarantined in a row, at most, before the campaign stops
};

struct HeartbeatSettings {
  bool enabled = true;
  std::string source = "auto";  // auto: the job's output until a heartbeat file has content; file; output
  std::string dir;  // absolute; each attempt's heartbeat file lives here
  Seconds startup_timeout{600};
  Seconds steady_timeout{300};
  Seconds probe_timeout{5};  // a node of a hung job that does not answer a probe step in this is excluded
  Seconds save_timeout{1800};
  std::string hang_command;      // run through /bin/sh before a hung job is cancelled; "" = none
  Seconds hang_command_timeout{60};
  std::string node_dump = "auto";  // auto: where no rank made a stacks file, a step dumps each node's job processes; off
  Seconds node_dump_timeout{30};
  std::string stacks_signal = "USR2";  // at a hang, sent to the job's steps: the helper's faulthandler dumps every rank's stacks; "" = none
  Seconds stacks_wait{10};             // how long the ranks have to dump them
  bool calibrate = true;         // shorten steady_timeout to calibrate_factor x the longest step seen
  int calibrate_factor = 10;
  Seconds calibrate_min{20};     // never calibrate below this
};

struct SwitchSettings {
  std::string kill;  // absolute path of the kill switch file
  std::string save;  // absolute path of the save switch file
};

struct Budget {
  int count = 0;  // restarts allowed within window; -1 = unlimited
  Seconds window{0};
  bool operator==(const Budget&) const = default;
};

struct PolicySettings {
  std::map<std::string, Budget> budgets;  // failure class -> restart budget
  int crash_loop_restarts = 3;  // restarts in a row without step progress that stop the campaign
  Seconds backoff_initial{10};
  Seconds backoff_max{600};
  Seconds submit_retry_for{3600};  // a refused submission that may pass later is retried this long
  Seconds submit_unknown_grace{60};  // after an sbatch whose outcome is unknown, the tag must stay absent this long
  Seconds exclusion_ttl{6 * 3600};
  // A failure nothing explains: its first failing task's node is excluded after the first such failure
  // (the first-evidence rule) or the second within the window (the repeated-failure rule alone).
  std::string exclusion_unexplained = "first";
  Seconds exclusion_unexplained_ttl{6 * 3600};  // how long the first-evidence rule's exclusions last
  int exclusion_cap = 0;  // most nodes excluded at once; 0 = as many as leave the job schedulable
  Seconds exclusion_relax_after{60};  // pending on ReqNodeNotAvail this long: drop the oldest exclusion
  int no_retry_exit_code = 78;
  Seconds pending_alert_after{3600};
  Seconds stop_grace{60};  // a training asked to stop (cancel, a window's end) has this long to save and exit
};

// stragglers: a rank slower than the others in its own compute per step (the heartbeat's compute=).
struct StragglerSettings {
  int slower_by = 20;       // percent over the median of the other ranks' smoothed compute
  Seconds for_time{600};    // without a break for this long: an event and an alert
};

// preflight: a command the templates run as one task per node before the training (MLSUP_PREFLIGHT).
struct PreflightSettings {
  std::string command;  // run through bash on every node; "" = none (`python3 -m mlsup_train.preflight`: one all-reduce)
  Seconds deadline{120};  // every node's task must have joined by then (MLSUP_PREFLIGHT_DEADLINE)
};

struct DiskSettings {
  Seconds runway_alert{24 * 3600};  // the checkpoint file system full sooner than this at the campaign's pace: an alert
};

struct EvidenceSettings {
  std::vector<EvidenceRuleSpec> rules;  // tried before the shipped rules, in this order
};

// debug_on_retry: what the attempt after a failure no evidence rule explains adds to its environment.
struct DebugRetrySettings {
  bool enabled = true;
  // Name -> value; "{{attempt_dir}}" in a value is the attempt's folder in state_dir.
  std::map<std::string, std::string> env{
      {"NCCL_DEBUG", "INFO"},                        // NCCL's init, transport and error lines
      {"TORCH_DISTRIBUTED_DEBUG", "DETAIL"},         // torch.distributed's checks of collectives across ranks
      {"TORCH_NCCL_TRACE_BUFFER_SIZE", "2000"},      // PyTorch's NCCL flight recorder: its last collectives
      {"TORCH_NCCL_DUMP_ON_TIMEOUT", "1"},           // ... dumped when its watchdog times out
      {"TORCH_NCCL_DEBUG_INFO_TEMP_FILE", "{{attempt_dir}}/nccl_trace_rank_"},  // ... into the attempt's folder
      {"TORCH_NCCL_DEBUG_INFO_PIPE_FILE", "{{attempt_dir}}/nccl_trace_rank_"},  // ... or when the hang's node dump asks
  };
};

// window: when the campaign's jobs may run. decide/window.h reads hours and days; the engine loads the zone.
struct WindowSettings {
  std::string hours;              // "20:00-07:00" (local, across midnight allowed); "" = no window: always open
  std::vector<std::string> days;  // the days it opens on ("mon".."sun", "weekdays", "weekends", "mon-fri"); empty = every day
  std::string zone;               // a tz database name; "" = the machine's own zone (/etc/localtime)
  std::string at_end = "pause";   // at its end: pause (the training saves and exits) or finish (it goes on to its end)
};

struct NotifySettings {
  std::string command;  // run through /bin/sh with MLSUP_EVENT_* in its environment; "" = none
  std::string webhook;  // http:// or https:// URL that receives each alert as a POST; "" = none
  Seconds cooldown{900};
  std::vector<std::string> on{default_alert_kinds().begin(), default_alert_kinds().end()};  // kinds told
  std::string format = "json";  // the webhook's body: json (the event) or slack ({"text": one line})
  std::string ca_file;          // https: the CAs trusted instead of the system's; "" = the system's store
  Seconds unreachable_after{600};  // Slurm unanswered this long is the supervisor's trouble
  int budget_warn_at = 80;      // percent of a restart budget used that is "nearly spent"
  bool include_output = false;  // the webhook's json body carries the job's output tail (it may hold secrets)
};

// Where a key was written, for errors found after loading.
struct Location {
  int line = 0;
  int column = 0;
};

struct Config {
  std::string source_file;  // the YAML file, as given
  std::string base_dir;     // its folder, absolute; relative paths resolve against it

  std::string name;
  std::string template_path;  // absolute
  std::string state_dir;      // absolute
  std::map<std::string, std::string> vars;
  SlurmSettings slurm;
  CheckpointSettings checkpoint;
  HeartbeatSettings heartbeat;
  SwitchSettings switches;
  PolicySettings policy;
  long long target_steps = 0;  // 0 = no target: a COMPLETED job completes the campaign
  Millis poll_interval{500};
  Millis pending_poll_interval{5000};  // the passes of a campaign whose job waits in the queue (never below poll_interval)
  Millis running_poll_interval{5000};  // Slurm asked about a running job while nothing cheaper moved (never below poll_interval)
  Seconds lease_ttl{120};  // a supervisor's claim on the campaign, unrenewed (journal/lease.h)
  Seconds memory_save_interval{30};  // what passes observe without deciding is saved this often at most
  NotifySettings notify;
  WindowSettings window;
  DiskSettings disk;
  PreflightSettings preflight;
  StragglerSettings stragglers;
  EvidenceSettings evidence;
  DebugRetrySettings debug_on_retry;

  std::string set_file;  // a run of a campaign set: the set's file, as given ("" for a config of its own)
  std::string set_run;   // and the run's name in it

  std::map<std::string, Location> written;  // every schema key present in the file, and where

  StateDir dir() const { return {state_dir}; }  // the paths inside state_dir

  // True when the file set key (a schema path such as "slurm.signal").
  bool is_set(const std::string& key) const { return written.contains(key); }
};

}  // namespace mlsup::config
